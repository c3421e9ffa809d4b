// matmul / matmul_many on every kernel table and thread count: each cell against a float64 dot of
// the dequantized weights and activations (the activations quantized by the scalar reference), and
// matmul_many equal to separate matmul calls (same kernels per row, so bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/ops/ops.h"
#include "core/quant/formats.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"
#include "tests/support/float_bits.h"

namespace ox {
namespace {

struct Matrix {
  std::vector<uint8_t> bytes;
  Tensor t;
};

Matrix random_matrix(DType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (float& v : x) v = dist(rng);
  Matrix m;
  m.t.type = type;
  m.t.rows = rows;
  m.t.cols = cols;
  m.t.row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(cols));
  m.bytes.resize(m.t.row_bytes * static_cast<uint64_t>(rows));
  quantize_rows_uniform(type, x.data(), m.bytes.data(), rows, cols);
  m.t.data = m.bytes.data();
  return m;
}

std::vector<float> random_input(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

// What x looks like to the kernels: quantized to the activation format and back.
std::vector<float> as_activations(DType w, const std::vector<float>& x, int64_t cols) {
  const DType a = quant_traits(w).vec_dot_type;
  if (a == DType::F32) return x;
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> q(dtype_row_bytes(a, static_cast<uint64_t>(cols)) * static_cast<uint64_t>(n / cols));
  quant_traits(a).from_float_ref(x.data(), q.data(), n);
  std::vector<float> out(x.size());
  quant_traits(a).to_float(q.data(), out.data(), n);
  return out;
}

TEST(Matmul, EveryTableAndThreadCountMatchesFloat64) {
  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    for (DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::F16, DType::F32}) {
      const int64_t cols = 512;
      for (int64_t rows : {5, 37, 100}) {
        const Matrix m = random_matrix(type, rows, cols, 7);
        std::vector<float> w(static_cast<size_t>(rows * cols));
        quant_traits(type).to_float(m.t.data, w.data(), rows * cols);
        for (int64_t tokens : {1, 3, 70}) {
          const std::vector<float> x = random_input(tokens * cols, 11);
          const std::vector<float> xa = as_activations(type, x, cols);
          for (int threads : {1, 2, 3}) {
            for (bool order_free : {false, true}) {  // true: gemm_wide where a table has one
              ThreadPool pool(threads);
              OpContext ctx;
              ctx.kernels = table;
              ctx.pool = &pool;
              ctx.order_free = order_free;
              std::vector<float> y(static_cast<size_t>(rows * tokens), NAN);
              matmul(ctx, m.t, x.data(), tokens, y.data());
              for (int64_t t = 0; t < tokens; ++t) {
                for (int64_t r = 0; r < rows; ++r) {
                  double want = 0, mag = 0;
                  for (int64_t c = 0; c < cols; ++c) {
                    const double p = static_cast<double>(w[r * cols + c]) * xa[t * cols + c];
                    want += p;
                    mag += std::fabs(p);
                  }
                  ASSERT_NEAR(y[t * rows + r], want, 1e-5 * mag + 1e-6)
                      << table->isa << " " << dtype_name(type) << " rows " << rows << " tokens " << tokens << " threads "
                      << threads << " order_free " << order_free << " cell " << r << "," << t;
                }
              }
            }
          }
        }
      }
    }
  }
}

// matmul_many hands rows out in chunks from a shared counter (guided sizes, at least 2^20
// multiply-adds each): with ops this large a decode call is cut into several chunks, some spanning
// two matrices. Which thread takes a chunk must not change a single bit of the output.
TEST(Matmul, ThreadCountDoesNotChangeBits) {
  const int64_t cols = 2048;
  const Matrix a = random_matrix(DType::Q4_K, 3001, cols, 21);
  const Matrix b = random_matrix(DType::Q6_K, 1001, cols, 22);
  const Matrix c = random_matrix(DType::Q4_K, 17, cols, 23);
  const Matrix* ms[] = {&a, &b, &c};
  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    for (int64_t tokens : {1, 5}) {
      const std::vector<float> x = random_input(tokens * cols, 24);
      std::vector<std::vector<float>> one_thread;
      for (int threads : {1, 2, 3, 4}) {
        ThreadPool pool(threads);
        OpContext ctx;
        ctx.kernels = table;
        ctx.pool = &pool;
        std::vector<std::vector<float>> ys;
        MatmulOutput outs[3];
        for (int i = 0; i < 3; ++i) {
          ys.emplace_back(static_cast<size_t>(ms[i]->t.rows * tokens), NAN);
          outs[i] = MatmulOutput{&ms[i]->t, ys.back().data(), ms[i]->t.rows};
        }
        matmul_many(ctx, outs, x.data(), tokens);
        if (threads == 1) {
          one_thread = ys;
          continue;
        }
        for (int i = 0; i < 3; ++i) {
          for (size_t j = 0; j < ys[i].size(); ++j) {
            ASSERT_EQ(ys[i][j], one_thread[i][j])
                << table->isa << " tokens " << tokens << " threads " << threads << " matrix " << i << " " << j;
          }
        }
      }
    }
  }
}

// A matrix without rows is a no-op on every thread count (the chunk sizes divide by the row count).
TEST(Matmul, NoRowsWritesNothing) {
  const Matrix m = random_matrix(DType::Q4_K, 0, 256, 31);
  const std::vector<float> x = random_input(2 * 256, 32);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    OpContext ctx;
    ctx.kernels = kernels::all_kernels().front();
    ctx.pool = &pool;
    float sentinel = 7.0f;
    matmul(ctx, m.t, x.data(), 2, &sentinel, 1);
    EXPECT_EQ(sentinel, 7.0f);
  }
}

// A decode step of several sequences (OpContext::one_token_bits): each token's outputs are the
// bits that token gets in a matmul of its own, on every table and weight format, whichever
// kernel serves the format (gemm_few, the one-token gemm or vec_dot per token) and however the
// rows fall into blocks and chunks (ragged row counts, several threads).
TEST(Matmul, OneTokenBitsGiveEachTokenItsSoloBits) {
  const int64_t cols = 512;
  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    for (DType type : weight_formats()) {
      if (table->vec_dot[static_cast<uint32_t>(type)] == nullptr) continue;
      struct Case {
        int64_t rows, tokens;
        int threads;
      };
      for (const Case c : {Case{37, 2, 1}, Case{300, 9, 3}, Case{300, 20, 2}}) {
        const Matrix m = random_matrix(type, c.rows, cols, 41);
        const std::vector<float> x = random_input(c.tokens * cols, 42);
        ThreadPool pool(c.threads);
        OpContext ctx;
        ctx.kernels = table;
        ctx.pool = &pool;
        std::vector<float> solo(static_cast<size_t>(c.rows * c.tokens), NAN), step(solo.size(), NAN);
        for (int64_t t = 0; t < c.tokens; ++t) matmul(ctx, m.t, x.data() + t * cols, 1, solo.data() + t * c.rows);
        ctx.one_token_bits = true;
        matmul(ctx, m.t, x.data(), c.tokens, step.data());
        for (size_t j = 0; j < step.size(); ++j) {
          ASSERT_EQ(test::float_bits(step[j]), test::float_bits(solo[j]))
              << table->isa << " " << dtype_name(type) << " rows " << c.rows << " tokens " << c.tokens << " threads "
              << c.threads << " cell (" << j % c.rows << ", " << j / c.rows << "): " << step[j] << " vs solo " << solo[j];
        }
      }
    }
  }
}

// OpContext::order_free hands F32 products to gemm_wide (here a stand-in that records its calls and
// writes a marker), in calls of whole 32-token panels but the last; unset, gemm keeps them, with
// the bits of the table's own gemm.
std::vector<int64_t> g_wide_calls;  // n_tokens of each call
void marking_wide_gemm(int64_t, const uint8_t*, uint64_t, int64_t n_rows, const uint8_t*, uint64_t, int64_t n_tokens,
                       float* y, int64_t y_stride) {
  g_wide_calls.push_back(n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < n_rows; ++r) y[t * y_stride + r] = 1234.5f;
  }
}

TEST(Matmul, OrderFreeTakesGemmWide) {
  const int64_t cols = 3072, rows = 40, tokens = 70;  // 21 tokens of kActChunkBytes: chunks of 32
  const Matrix m = random_matrix(DType::F32, rows, cols, 51);
  const std::vector<float> x = random_input(tokens * cols, 52);
  const kernels::KernelTable& best = kernels::best_kernels();
  kernels::KernelTable marked = best;
  marked.gemm_wide[static_cast<uint32_t>(DType::F32)] = marking_wide_gemm;
  ThreadPool pool(1);
  OpContext ctx;
  ctx.pool = &pool;
  std::vector<float> want(static_cast<size_t>(rows * tokens), NAN), got(want.size(), NAN);
  ctx.kernels = &best;
  matmul(ctx, m.t, x.data(), tokens, want.data());
  ctx.kernels = &marked;
  g_wide_calls.clear();
  matmul(ctx, m.t, x.data(), tokens, got.data());
  EXPECT_TRUE(g_wide_calls.empty()) << "gemm_wide taken without order_free";
  for (size_t j = 0; j < got.size(); ++j) {
    ASSERT_EQ(test::float_bits(got[j]), test::float_bits(want[j])) << best.isa << " cell " << j;
  }
  ctx.order_free = true;
  matmul(ctx, m.t, x.data(), tokens, got.data());
  EXPECT_EQ(g_wide_calls, (std::vector<int64_t>{32, 32, 6}));
  for (size_t j = 0; j < got.size(); ++j) ASSERT_EQ(got[j], 1234.5f) << "cell " << j;
}

TEST(Matmul, ManyEqualsSeparateCalls) {
  const int64_t cols = 256, tokens = 9;
  const Matrix a = random_matrix(DType::Q4_K, 40, cols, 1);
  const Matrix b = random_matrix(DType::Q6_K, 17, cols, 2);  // same activation format (Q8_K)
  const Matrix c = random_matrix(DType::Q4_K, 3, cols, 3);
  const std::vector<float> x = random_input(tokens * cols, 4);
  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    for (int threads : {1, 2, 4}) {
      ThreadPool pool(threads);
      OpContext ctx;
      ctx.kernels = table;
      ctx.pool = &pool;
      std::vector<std::vector<float>> separate, many;
      const Matrix* ms[] = {&a, &b, &c};
      MatmulOutput outs[3];
      for (int i = 0; i < 3; ++i) {
        separate.emplace_back(static_cast<size_t>(ms[i]->t.rows * tokens));
        many.emplace_back(static_cast<size_t>(ms[i]->t.rows * tokens), NAN);
        matmul(ctx, ms[i]->t, x.data(), tokens, separate.back().data());
        outs[i] = MatmulOutput{&ms[i]->t, many.back().data(), ms[i]->t.rows};
      }
      ASSERT_TRUE(same_activations(a.t, b.t));
      matmul_many(ctx, outs, x.data(), tokens);
      for (int i = 0; i < 3; ++i) {
        for (size_t j = 0; j < many[i].size(); ++j) {
          ASSERT_EQ(many[i][j], separate[i][j]) << table->isa << " threads " << threads << " matrix " << i << " " << j;
        }
      }
    }
  }
  EXPECT_FALSE(same_activations(random_matrix(DType::Q4_0, 1, cols, 5).t, a.t));  // Q8_0 vs Q8_K activations
}

}  // namespace
}  // namespace ox
