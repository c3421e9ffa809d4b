// matmul: weights (any format) times f32 activations through the KernelTable.
// Activations are converted once per call to the weight format's activation format, then each
// thread takes a contiguous range of weight rows, so each weight byte is read once per call.
#include <algorithm>
#include <cstring>

#include "core/ops/ops.h"
#include "core/quant/traits.h"

namespace ox {
namespace {
// Rows per work unit: keeps threads on separate cache lines of y and amortises the split.
constexpr int64_t kRowGranule = 16;
// Below this many multiply-adds an op runs on the calling thread (a wake-up costs ~1-5 us).
constexpr int64_t kMinParallelWork = 1 << 16;
// Activation bytes one tiled pass keeps hot (half of a typical 512 KB - 2 MB L2).
constexpr uint64_t kActChunkBytes = 256 * 1024;
}  // namespace

void parallel_for_work(OpContext& ctx, int64_t work, FunctionRef<void(int, int)> fn) {
  if (work < kMinParallelWork || ctx.pool->n_threads() == 1) {
    fn(0, 1);
  } else {
    ctx.pool->run(fn);
  }
}

void matmul(OpContext& ctx, const Tensor& w, const float* x, int64_t n_tokens, float* y, int64_t y_stride) {
  const kernels::KernelTable& k = *ctx.kernels;
  const uint32_t wt = static_cast<uint32_t>(w.type);
  const DType act_type = quant_traits(w.type).vec_dot_type;
  const VecDotFn dot = k.vec_dot[wt];
  OX_CHECK(dot != nullptr);
  if (y_stride == 0) y_stride = w.rows;
  const int64_t cols = w.cols;

  // Activations in the format the dot product wants.
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  uint64_t act_row_bytes = static_cast<uint64_t>(cols) * sizeof(float);
  if (act_type != DType::F32) {
    act_row_bytes = dtype_row_bytes(act_type, static_cast<uint64_t>(cols));
    const uint64_t need = act_row_bytes * static_cast<uint64_t>(n_tokens);
    if (ctx.act_scratch.size() < need) ctx.act_scratch.resize(need);
    uint8_t* dst = ctx.act_scratch.data();
    const FromFloatFn quantize = k.quantize_row[static_cast<uint32_t>(act_type)];
    OX_CHECK(quantize != nullptr);
    auto quantize_rows = [&](int index, int count) {
      int64_t b, e;
      split_range(n_tokens, index, count, 1, &b, &e);
      for (int64_t t = b; t < e; ++t) quantize(x + t * cols, dst + static_cast<uint64_t>(t) * act_row_bytes, cols);
    };
    parallel_for_work(ctx, n_tokens * cols, quantize_rows);
    act = dst;
  }

  const kernels::GemmFn gemm = k.gemm[wt];
  // Tokens per pass over a block of rows: enough activation rows to reuse each weight block many
  // times, few enough that they stay in L2 while the thread's rows stream past them.
  const int64_t token_chunk = std::max<int64_t>(1, std::min<int64_t>(n_tokens, static_cast<int64_t>(kActChunkBytes / act_row_bytes)));
  auto dot_rows = [&](int index, int count) {
    int64_t b, e;
    split_range(w.rows, index, count, kRowGranule, &b, &e);
    if (gemm == nullptr) {
      for (int64_t r = b; r < e; ++r) {
        const uint8_t* wr = w.row(r);
        for (int64_t t = 0; t < n_tokens; ++t) {
          dot(cols, y + t * y_stride + r, wr, act + static_cast<uint64_t>(t) * act_row_bytes);
        }
      }
      return;
    }
    for (int64_t t0 = 0; t0 < n_tokens; t0 += token_chunk) {
      const int64_t nt = std::min(token_chunk, n_tokens - t0);
      const uint8_t* a = act + static_cast<uint64_t>(t0) * act_row_bytes;
      for (int64_t r0 = b; r0 < e; r0 += kRowGranule) {
        const int64_t nr = std::min(kRowGranule, e - r0);
        gemm(cols, w.row(r0), w.row_bytes, nr, a, act_row_bytes, nt, y + t0 * y_stride + r0, y_stride);
      }
    }
  };
  parallel_for_work(ctx, w.rows * cols * n_tokens, dot_rows);
}

void get_row(const Tensor& w, int64_t index, float* out) {
  const QuantTraits& tr = quant_traits(w.type);
  OX_CHECK(tr.to_float != nullptr);
  tr.to_float(w.row(index), out, w.cols);
}

std::vector<float> to_f32(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.cols * t.rows * t.n_mats));
  const int64_t total_rows = t.rows * t.n_mats;
  for (int64_t r = 0; r < total_rows; ++r) get_row(t, r, out.data() + r * t.cols);
  return out;
}

}  // namespace ox
