// Fused attention against a float64 reference written here from the definition (softmax over the
// visible positions of scale * q.k, soft-capped, times V), for every KV cache type on every kernel
// table: decode and prefill, one and several tiles, position chunks (long decode on 2 threads),
// sliding windows, soft-capping, ALiBi biases and grouped-query heads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/kv_cache/kv_cache.h"
#include "core/ops/alibi.h"
#include "core/ops/attention.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"
#include "tests/support/random_data.h"

namespace ox {
namespace {

using test::random_vector;

// x through format `type` and back with the scalar references: what a cache of that type holds.
std::vector<float> round_trip(const std::vector<float>& x, DType type, int64_t row) {
  const QuantTraits& t = quant_traits(type);
  std::vector<uint8_t> bytes(dtype_row_bytes(type, static_cast<uint64_t>(row)));
  std::vector<float> out(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(row); ++r) {
    t.from_float_ref(x.data() + r * row, bytes.data(), row);
    t.to_float(bytes.data(), out.data() + r * row, row);
  }
  return out;
}

// ALiBi's slope of head h as BLOOM's build_alibi_tensor writes it (there for max_bias 8), in
// float64: with c the largest power of two <= n_head, heads below c take powers 1..c of
// 2^(-max_bias / c), the rest the odd powers 1, 3, 5, ... of 2^(-max_bias / (2c)).
double reference_slope(int h, int n_head, double max_bias) {
  if (max_bias <= 0) return 0.0;
  int c = 1;
  while (c * 2 <= n_head) c *= 2;
  if (h < c) return std::pow(std::pow(2.0, -max_bias / c), h + 1);
  return std::pow(std::pow(2.0, -max_bias / (2 * c)), 2 * (h - c) + 1);
}

// Float64: q, k, v as given (k and v as the cache holds them, q as the key type's dot product sees it).
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              int64_t n_tokens, int64_t pos0, const AttentionParams& p) {
  const int64_t kd = p.n_head_kv * p.head_dim_k, vd = p.n_head_kv * p.head_dim_v;
  std::vector<double> out(static_cast<size_t>(n_tokens * p.n_head * p.head_dim_v), 0.0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t pos = pos0 + t;
    for (int h = 0; h < p.n_head; ++h) {
      const int hk = h / (p.n_head / p.n_head_kv);
      const int64_t first = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
      std::vector<double> s;
      double max_s = -1e300;
      for (int64_t j = first; j <= pos; ++j) {
        double dot = 0;
        for (int d = 0; d < p.head_dim_k; ++d) {
          dot += double{q[static_cast<size_t>((t * p.n_head + h) * p.head_dim_k + d)]} *
                 k[static_cast<size_t>(j * kd + hk * p.head_dim_k + d)];
        }
        dot *= p.scale;
        if (p.softcap > 0) dot = p.softcap * std::tanh(dot / p.softcap);
        dot += reference_slope(h, p.n_head, p.alibi_max_bias) * static_cast<double>(j - pos);
        s.push_back(dot);
        max_s = std::max(max_s, dot);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - max_s));
      for (int64_t j = first; j <= pos; ++j) {
        for (int d = 0; d < p.head_dim_v; ++d) {
          out[static_cast<size_t>((t * p.n_head + h) * p.head_dim_v + d)] +=
              s[static_cast<size_t>(j - first)] / sum * v[static_cast<size_t>(j * vd + hk * p.head_dim_v + d)];
        }
      }
    }
  }
  return out;
}

struct Case {
  int64_t n_kv, n_tokens;
  int n_head, n_head_kv, head_dim;
  int window;
  float softcap;
  float alibi = 0.0f;  // ALiBi's max_bias
};

// Runs one case with the cache in (type_k, type_v) through `table` on `threads` threads; returns
// the largest |ours - reference| and checks nothing is NaN.
double max_error(const kernels::KernelTable* table, int threads, DType type_k, DType type_v, const Case& c,
                 bool f16_accumulator = false) {
  ThreadPool pool(threads);
  OpContext ctx;
  ctx.kernels = table;
  ctx.pool = &pool;
  AttentionParams p;
  p.n_head = c.n_head;
  p.n_head_kv = c.n_head_kv;
  p.head_dim_k = p.head_dim_v = c.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  p.window = c.window;
  p.softcap = c.softcap;
  p.alibi_max_bias = c.alibi;
  p.f16_accumulator = f16_accumulator;
  const int64_t pos0 = c.n_kv - c.n_tokens;
  const int64_t kd = c.n_head_kv * c.head_dim;
  const std::vector<float> q = random_vector(static_cast<size_t>(c.n_tokens * c.n_head * c.head_dim), 21, 2.0f);
  const std::vector<float> k = random_vector(static_cast<size_t>(c.n_kv * kd), 22);
  const std::vector<float> v = random_vector(static_cast<size_t>(c.n_kv * kd), 23);
  // The cache's bytes, written with the table's converters as the decoder does.
  const uint64_t k_row = dtype_row_bytes(type_k, static_cast<uint64_t>(kd));
  const uint64_t v_row = dtype_row_bytes(type_v, static_cast<uint64_t>(kd));
  std::vector<uint8_t> k_bytes(k_row * static_cast<uint64_t>(c.n_kv)), v_bytes(v_row * static_cast<uint64_t>(c.n_kv));
  for (int64_t j = 0; j < c.n_kv; ++j) {
    table->quantize_row[static_cast<uint32_t>(type_k)](k.data() + j * kd, k_bytes.data() + j * k_row, kd);
    table->quantize_row[static_cast<uint32_t>(type_v)](v.data() + j * kd, v_bytes.data() + j * v_row, kd);
  }
  const KvLayerView view{k_bytes.data(), v_bytes.data(), k_row, v_row, type_k, type_v};
  std::vector<float> out(static_cast<size_t>(c.n_tokens * c.n_head * c.head_dim), NAN);
  attention(ctx, q.data(), c.n_tokens, pos0, view, p, out.data());
  const DType q_type = quant_traits(type_k).vec_dot_type;
  const std::vector<double> want =
      reference(round_trip(q, q_type, c.head_dim), round_trip(k, type_k, c.head_dim), round_trip(v, type_v, c.head_dim),
                c.n_tokens, pos0, p);
  double err = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i])) return INFINITY;
    err = std::max(err, std::fabs(out[i] - want[i]));
  }
  return err;
}

const Case kCases[] = {
    {1, 1, 4, 2, 64, 0, 0.0f},       // the first token: one position
    {23, 7, 4, 2, 64, 0, 0.0f},      // prefill on top of a cache, one tile
    {23, 7, 4, 2, 64, 5, 2.0f},      // window and soft-cap
    {200, 1, 8, 2, 64, 0, 0.0f},     // decode over several tiles
    {700, 1, 8, 1, 128, 0, 0.0f},    // long decode: position chunks on 2 threads, one KV head
    {700, 2, 4, 4, 64, 100, 0.0f},   // two tokens, window across chunk and tile edges, no GQA
    {1500, 1, 4, 1, 64, 300, 0.0f},  // decode in a window: position chunks cut the window only
    {150, 150, 14, 2, 64, 0, 30.0f}, // a whole prompt: several token blocks and tiles, soft-capped
    {90, 90, 12, 4, 64, 0, 0.0f, 8.0f},   // ALiBi (bloom's 8) on 12 heads: 8 + 4 interleaved slopes
    {200, 1, 6, 2, 64, 0, 0.0f, 8.0f},    // ALiBi decode over several tiles, 6 heads
    {23, 7, 4, 2, 64, 5, 2.0f, 16.0f},    // ALiBi after soft-capping, in a window
    {700, 1, 8, 2, 64, 0, 0.0f, 64.0f},   // ALiBi over position chunks (slopes 2^-8 .. 2^-64: far ones count)
};

// The bound on |ours - reference|: f32 summation noise, 2e-5 of outputs of size ~1 (measured up to
// 8e-6). Except for q4_1 / q5_1 keys: their queries go to Q8_1, which keeps its block sum
// s = d * sum(q) in f16 for the dot product's min term, a rounding (2^-11 relative) of m * s per
// block that the round-trip reference does not make; measured up to 2.2e-3.
double bound(DType type_k) { return quant_traits(type_k).vec_dot_type == DType::Q8_1 ? 5e-3 : 2e-5; }

using TableParam = const kernels::KernelTable*;
class AttentionTypes : public ::testing::TestWithParam<TableParam> {};

// Every cache type, keys and values in the same type; then f16 keys with each other value type.
// The reference sees the keys and values the cache holds and the query as the key type's dot
// product sees it (bound() above).
TEST_P(AttentionTypes, EveryCacheTypeMatchesFloat64Reference) {
  const kernels::KernelTable* table = GetParam();
  for (DType type : kKvCacheTypes) {
    for (const Case& c : kCases) {
      for (int threads : {1, 2}) {
        const double err = max_error(table, threads, type, type, c);
        EXPECT_LT(err, bound(type)) << table->isa << " " << kv_cache_type_name(type) << " n_kv " << c.n_kv << " n_tokens "
                             << c.n_tokens << " window " << c.window << " threads " << threads;
      }
    }
    const Case mixed{200, 3, 8, 2, 64, 0, 0.0f};
    EXPECT_LT(max_error(table, 2, DType::F16, type, mixed), 2e-5) << table->isa << " v " << kv_cache_type_name(type);
  }
}

// A sliding-window layer's cache holds its rows from some position on (KvLayerView::pos_first):
// attention must give the bits of the whole cache, reading nothing before that row (the bytes
// there are NaN here, which would show in the output); and past the window's start it sees only
// what is held.
TEST_P(AttentionTypes, WindowViewFromItsFirstHeldPosition) {
  const kernels::KernelTable* table = GetParam();
  constexpr int64_t kKv = 700, kTokens = 5;
  constexpr int kHeadDim = 64, kHeadKv = 2;
  const int64_t pos0 = kKv - kTokens, kd = kHeadKv * kHeadDim;
  AttentionParams p;
  p.n_head = 8;
  p.n_head_kv = kHeadKv;
  p.head_dim_k = p.head_dim_v = kHeadDim;
  p.scale = 0.125f;
  p.window = 100;  // the first token sees [596, 695]
  const std::vector<float> q = random_vector(static_cast<size_t>(kTokens * p.n_head * kHeadDim), 31, 2.0f);
  const std::vector<float> k = random_vector(static_cast<size_t>(kKv * kd), 32);
  const std::vector<float> v = random_vector(static_cast<size_t>(kKv * kd), 33);
  for (DType type : {DType::F16, DType::F32, DType::Q8_0}) {
    const uint64_t row = dtype_row_bytes(type, static_cast<uint64_t>(kd));
    std::vector<uint8_t> k_bytes(row * kKv), v_bytes(row * kKv);
    for (int64_t j = 0; j < kKv; ++j) {
      table->quantize_row[static_cast<uint32_t>(type)](k.data() + j * kd, k_bytes.data() + j * row, kd);
      table->quantize_row[static_cast<uint32_t>(type)](v.data() + j * kd, v_bytes.data() + j * row, kd);
    }
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      OpContext ctx;
      ctx.kernels = table;
      ctx.pool = &pool;
      const size_t n_out = static_cast<size_t>(kTokens * p.n_head * kHeadDim);
      std::vector<float> whole(n_out), held(n_out);
      attention(ctx, q.data(), kTokens, pos0, KvLayerView{k_bytes.data(), v_bytes.data(), row, row, type, type}, p,
                whole.data());
      for (int64_t first : {576, 590, 596}) {  // a tile boundary, inside the tile, the window's first position
        std::vector<uint8_t> k_cut = k_bytes, v_cut = v_bytes;
        std::memset(k_cut.data(), 0xFF, static_cast<size_t>(first) * row);  // NaN scales and values
        std::memset(v_cut.data(), 0xFF, static_cast<size_t>(first) * row);
        const KvLayerView view{k_cut.data() + first * row, v_cut.data() + first * row, row, row, type, type, first};
        attention(ctx, q.data(), kTokens, pos0, view, p, held.data());
        EXPECT_EQ(std::memcmp(held.data(), whole.data(), n_out * sizeof(float)), 0)
            << table->isa << " " << kv_cache_type_name(type) << " first " << first << " threads " << threads;
      }
      // Held from 650 on (a window cut short): what it sees is those positions only, softmax-weighted.
      std::vector<uint8_t> k_cut = k_bytes, v_cut = v_bytes;
      std::memset(k_cut.data(), 0xFF, 650 * row);
      std::memset(v_cut.data(), 0xFF, 650 * row);
      attention(ctx, q.data(), kTokens, pos0, KvLayerView{k_cut.data() + 650 * row, v_cut.data() + 650 * row, row, row,
                                                           type, type, 650}, p, held.data());
      AttentionParams shorter = p;
      shorter.window = 50;  // the last token (699) sees [650, 699]: equal for it
      attention(ctx, q.data(), kTokens, pos0, KvLayerView{k_bytes.data(), v_bytes.data(), row, row, type, type},
                shorter, whole.data());
      const size_t last = static_cast<size_t>((kTokens - 1) * p.n_head * kHeadDim);
      for (size_t i = 0; i < n_out; ++i) ASSERT_FALSE(std::isnan(held[i])) << i;
      for (size_t i = last; i < n_out; ++i) {
        ASSERT_NEAR(held[i], whole[i], 1e-6) << table->isa << " " << kv_cache_type_name(type) << " " << i;
      }
    }
  }
}

// The work split of a window layer's decode covers its window, not every position held: every
// chunk holds positions the token sees, and on 2 threads the window is cut in at least 2 (before,
// chunks cut [0, n_kv): the window fell in the last one, a single thread's work). A global layer's
// chunks still cut the whole context. Expected ranges come from the window's definition
// (AttentionParams::window), not from the code under test.
TEST(AttentionSplit, ChunksCutOnlyWhatTheCallSees) {
  AttentionParams p;
  p.n_head = 4;  // gemma3 1B's attention: 4 heads over 1 KV head, a window of 512
  p.n_head_kv = 1;
  p.head_dim_k = p.head_dim_v = 256;
  p.window = 512;
  for (int64_t pos_first : {int64_t{0}, int64_t{3584}}) {  // the whole cache (--swa-full), or the window's rows
    for (int threads : {2, 4}) {
      const AttentionSplit s = attention_split(1, 4095, pos_first, p, threads);  // the token at 4095 sees [3584, 4095]
      EXPECT_GE(s.n_chunks, 2) << threads;
      EXPECT_EQ(s.first % kAttentionTile, 0);
      EXPECT_LE(s.first, 3584);
      EXPECT_GT(s.first, 3584 - kAttentionTile);
      EXPECT_EQ(s.end, 4096);
      EXPECT_EQ(s.visible, 512);
      EXPECT_EQ(s.chunk_len % kAttentionTile, 0);
      for (int64_t c = 0; c < s.n_chunks; ++c) {  // every chunk meets the window
        const int64_t c0 = s.first + c * s.chunk_len, c1 = std::min(s.end, c0 + s.chunk_len);
        EXPECT_LT(c0, c1) << "chunk " << c << " threads " << threads << " pos_first " << pos_first;
        EXPECT_GT(c1, 3584) << "chunk " << c;
      }
      EXPECT_GE(s.first + s.n_chunks * s.chunk_len, 4096);  // and together they cover it
    }
  }
  // Not yet past the window (the token at 300 sees [0, 300]): from 0.
  EXPECT_EQ(attention_split(1, 300, 0, p, 2).first, 0);
  // Prefill of 64 tokens at 4032..4095: the first sees from 3521 on, the tile at 3520.
  const AttentionSplit prefill = attention_split(64, 4032, 0, p, 2);
  EXPECT_EQ(prefill.first, 3520);
  EXPECT_EQ(prefill.end, 4096);
  // A global layer: the whole context, cut for both threads.
  p.window = 0;
  const AttentionSplit global = attention_split(1, 4095, 0, p, 2);
  EXPECT_EQ(global.first, 0);
  EXPECT_EQ(global.end, 4096);
  EXPECT_EQ(global.visible, 4096);
  EXPECT_GE(global.n_chunks, 2);
  EXPECT_GE(global.n_chunks * global.chunk_len, 4096);
  // llama4's chunked window of 512: the token at 4095 sees its chunk [3584, 4095].
  p.window = 512;
  p.chunked = true;
  const AttentionSplit chunked = attention_split(1, 4095, 0, p, 2);
  EXPECT_EQ(chunked.first, 3584);
  EXPECT_EQ(chunked.visible, 512);
}

// Head sizes that are not a multiple of the SIMD width or of 32 (f16 only: block types need 32).
TEST_P(AttentionTypes, OddHeadSizes) {
  for (int head_dim : {40, 72, 80, 96, 256}) {
    const Case c{90, 5, 6, 3, head_dim, 0, 0.0f};
    EXPECT_LT(max_error(GetParam(), 2, DType::F16, DType::F16, c), 2e-5) << "head_dim " << head_dim;
    EXPECT_LT(max_error(GetParam(), 2, DType::F32, DType::BF16, c), 2e-5) << "head_dim " << head_dim;
  }
}

// llama.cpp's f16 accumulator (the parity numerics): f16 rounding of the running sum after each
// of ~n_kv updates, so within f16 precision of the reference but not equal to it.
TEST_P(AttentionTypes, F16AccumulatorRoundsWithinF16Precision) {
  for (const Case& c : {Case{23, 7, 4, 2, 64, 5, 2.0f}, Case{200, 1, 8, 2, 64, 0, 0.0f},
                        Case{40, 1, 6, 2, 64, 0, 0.0f, 8.0f}}) {
    const double err = max_error(GetParam(), 2, DType::F16, DType::F16, c, /*f16_accumulator=*/true);
    EXPECT_LT(err, 1e-2);
    EXPECT_GT(err, 1e-6) << "the f16 accumulator should round";
  }
}

// ggml's slopes (alibi_slope) are BLOOM's: n_head 8 gives 2^-1 .. 2^-8; n_head 6 gives 2^-2, 2^-4,
// 2^-6, 2^-8 then the interleaved 2^-1, 2^-3; and each is the float64 formula's within the error
// of raising an f32-rounded base to the power e (about e ulp: 2e-6 relative at e = 32 of 40 heads).
TEST(Alibi, SlopesAreBloomsAndTheReferences) {
  for (int h = 0; h < 8; ++h) EXPECT_EQ(alibi_slope(h, 8, 8.0f), std::ldexp(1.0f, -(h + 1))) << h;
  const float six[] = {0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f};
  for (int h = 0; h < 6; ++h) EXPECT_EQ(alibi_slope(h, 6, 8.0f), six[h]) << h;
  for (int n_head : {1, 3, 12, 40, 71}) {
    for (float max_bias : {1.0f, 8.0f, 13.5f}) {
      for (int h = 0; h < n_head; ++h) {
        const double want = reference_slope(h, n_head, max_bias);
        EXPECT_NEAR(alibi_slope(h, n_head, max_bias), want, 4e-6 * want) << n_head << " " << max_bias << " " << h;
      }
    }
  }
  EXPECT_EQ(alibi_slope(3, 8, 0.0f), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(AllTables, AttentionTypes, ::testing::ValuesIn(kernels::all_kernels()),
                         [](const ::testing::TestParamInfo<TableParam>& info) {
                           std::string name = info.param->isa;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

}  // namespace
}  // namespace ox
