// matmul: weights (any format) times f32 activations through the KernelTable.
// Activations are converted once per call to the weight format's activation format, then the
// threads take chunks of contiguous weight rows, so each weight byte is read once per call.
#include <algorithm>
#include <atomic>
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
// The least matmul_many hands a thread at once: kMinChunkWork multiply-adds and kMinChunkRows rows.
// Each chunk is one gemm call, which splits or packs the activations of all its tokens first: a
// cost per call in proportion to 1 / rows of the call's work. A decode step (one token) prepares
// next to nothing per call, and there the last chunk of an op is what the other threads wait for
// at its end (a 512-row chunk of a 2048-wide Q4_K matrix is ~45 us in wasm, against ~1 ms for
// the whole op): one token gets chunks down to kMinDecodeChunkRows.
constexpr int64_t kMinChunkWork = int64_t{1} << 20;
constexpr int64_t kMinChunkRows = 128;
constexpr int64_t kMinDecodeChunkRows = 32;
// Rows per block of a product in one-token-bits mode: all of a step's tokens pass over a block
// while it sits in L2 (64 rows of a 4096-wide Q4_K matrix: 144 KB), so the weights stream from
// memory once per step even where each token takes the one-token path on its own.
constexpr int64_t kOneTokenBitsRows = 64;
// The widest token panel of a gemm_wide kernel (AVX-512's 32 tokens; the 16 of AVX2, NEON and
// SIMD128 divide it).
constexpr int64_t kWidePanelTokens = 32;
}  // namespace

void parallel_for_work(OpContext& ctx, int64_t work, FunctionRef<void(int, int)> fn) {
  if (work < kMinParallelWork || ctx.pool->n_threads() == 1) {
    fn(0, 1);
  } else {
    ctx.pool->run(fn);
  }
}

void parallel_rows(OpContext& ctx, int64_t n_rows, int64_t work_per_row, FunctionRef<void(int64_t, int64_t)> fn) {
  auto share = [&](int index, int count) {
    int64_t b, e;
    split_range(n_rows, index, count, 1, &b, &e);
    if (b < e) fn(b, e);
  };
  parallel_for_work(ctx, n_rows > 1 ? n_rows * work_per_row : 0, share);
}

namespace {

// x converted to `act_type` (once for all matrices of a call), in ctx.act_scratch; f32 passes through.
const uint8_t* quantize_activations(OpContext& ctx, DType act_type, const float* x, int64_t n_tokens, int64_t cols,
                                    uint64_t* act_row_bytes) {
  *act_row_bytes = dtype_row_bytes(act_type, static_cast<uint64_t>(cols));
  if (act_type == DType::F32) return reinterpret_cast<const uint8_t*>(x);
  const uint64_t need = *act_row_bytes * static_cast<uint64_t>(n_tokens);
  if (ctx.act_scratch.size() < need) ctx.act_scratch.resize(need);
  uint8_t* dst = ctx.act_scratch.data();
  const FromFloatFn quantize = ctx.kernels->quantize_row[static_cast<uint32_t>(act_type)];
  OX_CHECK(quantize != nullptr);
  const uint64_t row_bytes = *act_row_bytes;
  auto quantize_rows = [&](int index, int count) {
    int64_t b, e;
    split_range(n_tokens, index, count, 1, &b, &e);
    for (int64_t t = b; t < e; ++t) quantize(x + t * cols, dst + static_cast<uint64_t>(t) * row_bytes, cols);
  };
  parallel_for_work(ctx, n_tokens * cols, quantize_rows);
  return dst;
}

// Rows [b, e) of one product, all tokens, each with the bits the one-token path gives it alone:
// gemm_few over blocks of rows that stay in L2 for all the tokens, or else the one-token path
// itself once per token over each block.
void product_rows_one_token_bits(const kernels::KernelTable& k, const MatmulOutput& o, const uint8_t* act,
                                 uint64_t act_row_bytes, int64_t n_tokens, int64_t b, int64_t e) {
  const Tensor& w = *o.w;
  const uint32_t wt = static_cast<uint32_t>(w.type);
  const kernels::GemmFn few = k.gemm_few[wt], gemm = k.gemm[wt];
  const VecDotFn dot = k.vec_dot[wt];
  for (int64_t rb = b; rb < e; rb += kOneTokenBitsRows) {
    const int64_t re = std::min(e, rb + kOneTokenBitsRows);
    if (few != nullptr) {
      few(w.cols, w.row(rb), w.row_bytes, re - rb, act, act_row_bytes, n_tokens, o.y + rb, o.y_stride);
      continue;
    }
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint8_t* a = act + static_cast<uint64_t>(t) * act_row_bytes;
      float* y = o.y + t * o.y_stride;
      if (gemm != nullptr) {
        gemm(w.cols, w.row(rb), w.row_bytes, re - rb, a, act_row_bytes, 1, y + rb, o.y_stride);
      } else {
        for (int64_t r = rb; r < re; ++r) dot(w.cols, y + r, w.row(r), a);
      }
    }
  }
}

// Rows [b, e) of one product, all tokens: tiles through gemm (gemm_wide where the pass is
// order-free and the table has one), or vec_dot per (row, token).
void product_rows(const kernels::KernelTable& k, const MatmulOutput& o, const uint8_t* act, uint64_t act_row_bytes,
                  int64_t n_tokens, int64_t b, int64_t e, bool order_free) {
  const Tensor& w = *o.w;
  const uint32_t wt = static_cast<uint32_t>(w.type);
  const int64_t cols = w.cols;
  const kernels::GemmFn wide = order_free ? k.gemm_wide[wt] : nullptr;
  const kernels::GemmFn gemm = wide != nullptr ? wide : k.gemm[wt];
  if (gemm == nullptr) {
    const VecDotFn dot = k.vec_dot[wt];
    for (int64_t r = b; r < e; ++r) {
      const uint8_t* wr = w.row(r);
      for (int64_t t = 0; t < n_tokens; ++t) {
        dot(cols, o.y + t * o.y_stride + r, wr, act + static_cast<uint64_t>(t) * act_row_bytes);
      }
    }
    return;
  }
  // Tokens per pass over the thread's rows: enough activation rows to reuse each weight block many
  // times, few enough that they stay in L2 while the rows stream past them. Each call covers the
  // thread's whole row range, so a kernel prepares (splits, packs) the activations once per pass;
  // the kernels block their rows themselves.
  // The wide kernels pack tokens into panels of up to kWidePanelTokens: whole panels per pass
  // (a 3072-wide F32 row makes 21 tokens of kActChunkBytes, which would leave a third of each
  // panel empty), even where that passes kActChunkBytes.
  int64_t token_chunk = static_cast<int64_t>(kActChunkBytes / act_row_bytes);
  if (wide != nullptr) token_chunk = std::max(kWidePanelTokens, token_chunk / kWidePanelTokens * kWidePanelTokens);
  if (wide == nullptr && k.gemm_all_tokens[wt]) token_chunk = n_tokens;
  token_chunk = std::max<int64_t>(1, std::min(n_tokens, token_chunk));
  for (int64_t t0 = 0; t0 < n_tokens; t0 += token_chunk) {
    const int64_t nt = std::min(token_chunk, n_tokens - t0);
    const uint8_t* a = act + static_cast<uint64_t>(t0) * act_row_bytes;
    gemm(cols, w.row(b), w.row_bytes, e - b, a, act_row_bytes, nt, o.y + t0 * o.y_stride + b, o.y_stride);
  }
}

}  // namespace

void matmul(OpContext& ctx, const Tensor& w, const float* x, int64_t n_tokens, float* y, int64_t y_stride) {
  const MatmulOutput o{&w, y, y_stride == 0 ? w.rows : y_stride};
  matmul_many(ctx, std::span<const MatmulOutput>(&o, 1), x, n_tokens);
}

void matmul_many(OpContext& ctx, std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens) {
  OX_CHECK(!outs.empty());
  const kernels::KernelTable& k = *ctx.kernels;
  const int64_t cols = outs[0].w->cols;
  const DType act_type = quant_traits(outs[0].w->type).vec_dot_type;
  int64_t total_granules = 0;
  for (const MatmulOutput& o : outs) {
    OX_CHECK(o.w->cols == cols && quant_traits(o.w->type).vec_dot_type == act_type);
    OX_CHECK(k.vec_dot[static_cast<uint32_t>(o.w->type)] != nullptr);
    total_granules += (o.w->rows + kRowGranule - 1) / kRowGranule;
  }
  if (total_granules == 0) return;  // no rows: nothing to write
  if (ctx.observer != nullptr) {
    for (size_t i = 0; i < outs.size(); ++i) {
      // Row views of one fused tensor share its name (and matrix): observed once.
      const Tensor& w = *outs[i].w;
      if (i > 0 && std::strcmp(outs[i - 1].w->name, w.name) == 0 && outs[i - 1].w->mat == w.mat) continue;
      ctx.observer->observe(w, x, n_tokens);
    }
  }
  uint64_t act_row_bytes = 0;
  const uint8_t* act = quantize_activations(ctx, act_type, x, n_tokens, cols, &act_row_bytes);

  int64_t work = 0;
  for (const MatmulOutput& o : outs) work += o.w->rows * cols * n_tokens;

  // One parallel region over the granules of every matrix in turn, handed out from a shared
  // counter rather than as one fixed share per thread: on a machine whose cores are shared (a
  // browser's main thread, a VM's neighbours) a thread that falls behind takes less of the op
  // instead of holding it up. Guided sizes: each grab takes 1 / (2 * threads) of what is left, so
  // the first chunks are large and the last ones short (little left to wait for), but not below
  // the minimums above. The boundaries follow from the sizes alone, whichever thread grabs, and a
  // chunk may span the end of one matrix and the start of the next.
  const int64_t n_threads = work < kMinParallelWork ? 1 : ctx.pool->n_threads();
  const int64_t granule_work = std::max<int64_t>(1, work / total_granules);
  // One chunk per thread at least (an op just above kMinParallelWork splits as evenly as before);
  // a single thread takes the whole op at once.
  const bool one_token_bits = ctx.one_token_bits && n_tokens > 1;
  const int64_t wanted_granules = n_tokens == 1 ? kMinDecodeChunkRows / kRowGranule
                                                : std::max(kMinChunkWork / granule_work, kMinChunkRows / kRowGranule);
  const int64_t min_granules =
      n_threads == 1 ? total_granules
                     : std::clamp<int64_t>(wanted_granules, 1, (total_granules + n_threads - 1) / n_threads);
  std::atomic<int64_t> next_granule{0};
  auto grab = [&](int64_t* gb, int64_t* ge) {
    int64_t cur = next_granule.load(std::memory_order_relaxed);
    for (;;) {
      if (cur >= total_granules) return false;
      const int64_t size = std::max(min_granules, (total_granules - cur) / (2 * n_threads));
      const int64_t end = std::min(total_granules, cur + size);
      if (next_granule.compare_exchange_weak(cur, end, std::memory_order_relaxed)) {
        *gb = cur;
        *ge = end;
        return true;
      }
    }
  };
  auto dot_rows = [&](int, int) {
    int64_t gb, ge;
    while (grab(&gb, &ge)) {
      int64_t first = 0;  // first granule of the current matrix
      for (const MatmulOutput& o : outs) {
        const int64_t granules = (o.w->rows + kRowGranule - 1) / kRowGranule;
        const int64_t lo = std::max(gb, first), hi = std::min(ge, first + granules);
        if (lo < hi) {
          const int64_t rb = (lo - first) * kRowGranule, re = std::min(o.w->rows, (hi - first) * kRowGranule);
          if (one_token_bits) {
            product_rows_one_token_bits(k, o, act, act_row_bytes, n_tokens, rb, re);
          } else {
            product_rows(k, o, act, act_row_bytes, n_tokens, rb, re, ctx.order_free);
          }
        }
        first += granules;
      }
    }
  };
  parallel_for_work(ctx, work, dot_rows);
}

bool same_activations(const Tensor& a, const Tensor& b) {
  return a.cols == b.cols && quant_traits(a.type).vec_dot_type == quant_traits(b.type).vec_dot_type;
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
