// AVX2 SwiGLU activation, 8 floats per step. Reference: ox::silu_mul_ref (core/base/activation.cpp)
// and its exp, ox::exp_bounded (core/base/exp_bounded.h), which this must match bit for bit: the
// same float operations in the same order, each rounded on its own. No FMA: every product is its
// own _mm256_mul_ps, and the project's -ffp-contract=off keeps the compiler from fusing them.
#include <immintrin.h>

#include "core/base/activation.h"
#include "core/base/attention_ref.h"
#include "kernels/x86/avx2/avx2.h"

namespace ox::kernels::avx2 {
namespace {

// exp_bounded on 8 lanes, constants restated rather than the header included: an inline function
// compiled with AVX2 flags could become the one copy the linker hands to baseline callers.
inline __m256 exp_bounded(__m256 v) {
  const __m256 round = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const __m256 shifted = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.44269504088896341f)), round);
  const __m256 n = _mm256_sub_ps(shifted, round);
  const __m256 n_ln2_hi = _mm256_mul_ps(n, _mm256_set1_ps(0.693145751953125f));
  const __m256 n_ln2_lo = _mm256_mul_ps(n, _mm256_set1_ps(1.428606765330187e-06f));
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(v, n_ln2_hi), n_ln2_lo);
  // Horner from r^7 / 7! down, as the reference.
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(0.5f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
  // 2^n: the low mantissa bits of `shifted` hold n (two's complement); rebias them into the
  // exponent field, (bits - 0x4B400000 + 127) << 23 in the reference.
  const __m256i bits = _mm256_castps_si256(shifted);
  const __m256i scale_bits = _mm256_slli_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(127 - 0x4B400000)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(scale_bits));
}

// The 8 lanes of v combined with op (max, add) down to one float.
template <typename Op>
inline float reduce(__m256 v, Op op) {
  __m128 x = op(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = op(x, _mm_movehl_ps(x, x));
  x = op(x, _mm_shuffle_ps(x, x, 1));
  return _mm_cvtss_f32(x);
}

}  // namespace

void silu_mul(float* x, const float* y, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 lo = _mm256_set1_ps(-87.0f), hi = _mm256_set1_ps(88.0f), one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    // -v by its sign bit, as the reference negates (0 - v would turn -0 into +0). The clamps:
    // max_ps(a, b) is a > b ? a : b, so max_ps(lo, m) is the reference's m < -87 ? -87 : m, NaN included.
    __m256 minus_v = _mm256_xor_ps(v, sign);
    minus_v = _mm256_min_ps(hi, _mm256_max_ps(lo, minus_v));
    const __m256 e = exp_bounded(minus_v);
    const __m256 silu = _mm256_div_ps(v, _mm256_add_ps(one, e));
    _mm256_storeu_ps(x + i, _mm256_mul_ps(silu, _mm256_loadu_ps(y + i)));
  }
  silu_mul_ref(x + i, y + i, n - i);  // the last n % 8
}

float attn_softmax(float* s, int64_t n, float scale, float* max) {
  // Scaled scores and their maximum first (max is exact in any order), then e^(s - m) as the
  // reference, 8 at a time.
  const __m256 sc = _mm256_set1_ps(scale);
  __m256 mv = _mm256_set1_ps(*max);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s + i), sc);
    _mm256_storeu_ps(s + i, x);
    mv = _mm256_max_ps(mv, x);
  }
  float m = reduce(mv, [](__m128 a, __m128 b) { return _mm_max_ps(a, b); });
  for (; i < n; ++i) {
    s[i] *= scale;
    m = s[i] > m ? s[i] : m;
  }
  const __m256 mb = _mm256_set1_ps(m), lo = _mm256_set1_ps(-87.0f);
  __m256 sum = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_bounded(_mm256_max_ps(lo, _mm256_sub_ps(_mm256_loadu_ps(s + i), mb)));
    _mm256_storeu_ps(s + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = reduce(sum, [](__m128 a, __m128 b) { return _mm_add_ps(a, b); });
  float tail_max = m;  // already the maximum and scaled: the reference's tail only exponentiates
  total += attn_softmax_ref(s + i, n - i, 1.0f, &tail_max);
  *max = m;
  return total;
}

}  // namespace ox::kernels::avx2
