// AVX-512 kernels of attention over an F16 KV cache, as the AVX2 ones (kernels/x86/avx2/attention.cpp)
// with 16 lanes: gemm[F16] in a 4 x 4 tile of accumulators (each converted key row serves four
// queries, each query four keys) and attn_accumulate with 64 accumulators in registers.
// References: vec_dot_f16_f16 / attn_accumulate_ref; only the order of the additions differs.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

inline __m512 load_f16(const uint16_t* p) { return _mm512_cvtph_ps(load256(p)); }

template <int R, int T>
inline void tile(int64_t n, const uint16_t* const* w, const uint16_t* const* a, float* y, int64_t y_stride) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load_f16(w[r] + i);
    for (int t = 0; t < T; ++t) {
      const __m512 av = load_f16(a[t] + i);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], av, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = hsum512(acc[r][t]);
      for (int64_t k = i; k < n; ++k) sum += fp16(w[r][k]) * fp16(a[t][k]);
      y[t * y_stride + r] = sum;
    }
  }
}

template <int R>
void rows(int64_t n, const uint16_t* const* w, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y,
          int64_t y_stride) {
  int64_t t = 0;
  const uint16_t* at[4];
  for (; t + 4 <= n_tokens; t += 4) {
    for (int k = 0; k < 4; ++k) at[k] = reinterpret_cast<const uint16_t*>(a + static_cast<uint64_t>(t + k) * a_stride);
    tile<R, 4>(n, w, at, y + t * y_stride, y_stride);
  }
  for (; t < n_tokens; ++t) {
    at[0] = reinterpret_cast<const uint16_t*>(a + static_cast<uint64_t>(t) * a_stride);
    tile<R, 1>(n, w, at, y + t * y_stride, y_stride);
  }
}

}  // namespace

void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride) {
  int64_t r = 0;
  const uint16_t* wr[4];
  for (; r + 4 <= n_rows; r += 4) {
    for (int k = 0; k < 4; ++k) wr[k] = reinterpret_cast<const uint16_t*>(w + static_cast<uint64_t>(r + k) * w_stride);
    rows<4>(n, wr, a, a_stride, n_tokens, y + r, y_stride);
  }
  for (; r < n_rows; ++r) {
    wr[0] = reinterpret_cast<const uint16_t*>(w + static_cast<uint64_t>(r) * w_stride);
    rows<1>(n, wr, a, a_stride, n_tokens, y + r, y_stride);
  }
}

void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  int64_t d = 0;
  for (; d + 64 <= dv; d += 64) {
    __m512 a0 = _mm512_loadu_ps(acc + d), a1 = _mm512_loadu_ps(acc + d + 16);
    __m512 a2 = _mm512_loadu_ps(acc + d + 32), a3 = _mm512_loadu_ps(acc + d + 48);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) {
      const __m512 wj = _mm512_set1_ps(w[j]);
      a0 = _mm512_fmadd_ps(wj, _mm512_loadu_ps(vj), a0);
      a1 = _mm512_fmadd_ps(wj, _mm512_loadu_ps(vj + 16), a1);
      a2 = _mm512_fmadd_ps(wj, _mm512_loadu_ps(vj + 32), a2);
      a3 = _mm512_fmadd_ps(wj, _mm512_loadu_ps(vj + 48), a3);
    }
    _mm512_storeu_ps(acc + d, a0);
    _mm512_storeu_ps(acc + d + 16, a1);
    _mm512_storeu_ps(acc + d + 32, a2);
    _mm512_storeu_ps(acc + d + 48, a3);
  }
  for (; d + 16 <= dv; d += 16) {
    __m512 a0 = _mm512_loadu_ps(acc + d);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[j]), _mm512_loadu_ps(vj), a0);
    _mm512_storeu_ps(acc + d, a0);
  }
  if (d < dv) avx2::attn_accumulate(acc + d, w, v + d, v_stride, n, dv - d);  // the last dv % 16
}

}  // namespace ox::kernels::avx512
