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

struct Vec {
  static constexpr int kLanes = 8;
  using Reg = __m256;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load_f16(const uint16_t* p) { return _mm256_cvtph_ps(load128(p)); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static float hsum(Reg v) { return avx2::hsum(v); }
};

float fp16_of(uint16_t h) { return fp16(h); }

}  // namespace

void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride) {
  x86::f16_gemm<Vec, 2>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, fp16_of);
}

void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  int64_t d = 0;
  for (; d + 32 <= dv; d += 32) {
    __m256 a0 = _mm256_loadu_ps(acc + d), a1 = _mm256_loadu_ps(acc + d + 8);
    __m256 a2 = _mm256_loadu_ps(acc + d + 16), a3 = _mm256_loadu_ps(acc + d + 24);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) {
      const __m256 wj = _mm256_broadcast_ss(w + j);
      a0 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj), a0);
      a1 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj + 8), a1);
      a2 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj + 16), a2);
      a3 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj + 24), a3);
    }
    _mm256_storeu_ps(acc + d, a0);
    _mm256_storeu_ps(acc + d + 8, a1);
    _mm256_storeu_ps(acc + d + 16, a2);
    _mm256_storeu_ps(acc + d + 24, a3);
  }
  for (; d + 8 <= dv; d += 8) {
    __m256 a0 = _mm256_loadu_ps(acc + d);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w + j), _mm256_loadu_ps(vj), a0);
    _mm256_storeu_ps(acc + d, a0);
  }
  for (; d < dv; ++d) {
    float s = acc[d];
    for (int64_t j = 0; j < n; ++j) s += w[j] * v[j * v_stride + d];
    acc[d] = s;
  }
}

}  // namespace ox::kernels::avx2
