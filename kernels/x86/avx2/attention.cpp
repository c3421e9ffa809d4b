// AVX2 kernels of attention over an F16 KV cache: gemm[F16] (scores: key rows against f16 query
// rows in a 2 x 4 tile of accumulators, kernels/x86/attention_tile.h) and attn_accumulate (the weighted sum of values, accumulators kept in registers
// across every position). Reference: vec_dot_f16_f16 / attn_accumulate_ref; products of f16 values
// are exact in f32, so only the order of the additions differs.
#include <cstring>

#include "core/quant/traits.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"
#include "kernels/x86/attention_tile.h"

namespace ox::kernels::avx2 {
namespace {

struct Vec : F32x8 {
  static Reg load_f16(const uint16_t* p) { return _mm256_cvtph_ps(load128(p)); }
};

float fp16_of(uint16_t h) { return fp16(h); }

}  // namespace

void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride) {
  x86::f16_gemm<Vec, 2>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, fp16_of);
}

void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  const int64_t done = x86::accumulate<Vec>(acc, w, v, v_stride, n, dv);
  for (int64_t d = done; d < dv; ++d) {
    float s = acc[d];
    for (int64_t j = 0; j < n; ++j) s += w[j] * v[j * v_stride + d];
    acc[d] = s;
  }
}

}  // namespace ox::kernels::avx2
