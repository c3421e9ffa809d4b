// AVX2 kernels of attention over an F16 KV cache: gemm[F16] (scores: R key rows against T query
// rows in f16, a 2 x 4 tile of accumulators so each loaded key row serves four queries and each
// query two keys) and attn_accumulate (the weighted sum of values, accumulators kept in registers
// across every position). Reference: vec_dot_f16_f16 / attn_accumulate_ref; products of f16 values
// are exact in f32, so only the order of the additions differs.
#include <cstring>

#include "core/quant/traits.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

inline __m256 load_f16(const uint16_t* p) { return _mm256_cvtph_ps(load128(p)); }

// y[t][r] for R rows x T tokens: sum over n of w_r * a_t.
template <int R, int T>
inline void tile(int64_t n, const uint16_t* const* w, const uint16_t* const* a, float* y, int64_t y_stride) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load_f16(w[r] + i);
    for (int t = 0; t < T; ++t) {
      const __m256 av = load_f16(a[t] + i);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], av, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = hsum(acc[r][t]);
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
  const uint16_t* wr[2];
  for (; r + 2 <= n_rows; r += 2) {
    for (int k = 0; k < 2; ++k) wr[k] = reinterpret_cast<const uint16_t*>(w + static_cast<uint64_t>(r + k) * w_stride);
    rows<2>(n, wr, a, a_stride, n_tokens, y + r, y_stride);
  }
  if (r < n_rows) {
    wr[0] = reinterpret_cast<const uint16_t*>(w + static_cast<uint64_t>(r) * w_stride);
    rows<1>(n, wr, a, a_stride, n_tokens, y + r, y_stride);
  }
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
