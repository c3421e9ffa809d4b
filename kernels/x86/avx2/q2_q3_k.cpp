// AVX2 dot products of Q2_K and Q3_K against Q8_K. Reference: quant_traits(Q2_K / Q3_K).vec_dot_ref.
// Both store 2-bit planes: byte l of 32-byte half h holds elements 128h + 32j + l at bits 2j..2j+1,
// and a 16-element sub-block k has one scale, so a 32-byte vector spans sub-blocks 2j and 2j+1.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// sum over one 128-element half: plane j of `q` (0..7 values per byte) against activations
// a[32j..32j+31], i16 pair sums scaled by sub-block scales 2j (low lane) and 2j+1 (high lane).
inline __m256i plane_dot(__m256i q, const int8_t* a, __m256i half_scales, int j) {
  const __m256i p = mul_u8s8(q, load256(a + 32 * j));
  return _mm256_madd_epi16(p, _mm256_shuffle_epi8(half_scales, word_splat_mask(2 * j, 2 * j + 1)));
}

// Scales 8h..8h+7 of a 16 x i16 vector, repeated in both lanes.
inline __m256i half_scales(__m256i scales16, int h) {
  return h == 0 ? _mm256_permute2x128_si256(scales16, scales16, 0x00)
                : _mm256_permute2x128_si256(scales16, scales16, 0x11);
}

}  // namespace

template <>
void vec_dot<DType::Q2_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m2 = _mm256_set1_epi8(3);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // scales[k]: low nibble = scale of sub-block k, high nibble = its min.
    const __m128i packed = load128(x[i].scales);
    const __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, m4));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
    const __m256i min_dot = _mm256_madd_epi16(load256(y[i].bsums), mins16);
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load256(x[i].qs + 32 * h);
      const __m256i sc = half_scales(scales16, h);
      const int8_t* a = y[i].qs + 128 * h;
      const __m256i s0 = plane_dot(_mm256_and_si256(q, m2), a, sc, 0);
      const __m256i s1 = plane_dot(_mm256_and_si256(_mm256_srli_epi16(q, 2), m2), a, sc, 1);
      const __m256i s2 = plane_dot(_mm256_and_si256(_mm256_srli_epi16(q, 4), m2), a, sc, 2);
      const __m256i s3 = plane_dot(_mm256_and_si256(_mm256_srli_epi16(q, 6), m2), a, sc, 3);
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3)));
    }
    const float dy = y[i].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(min_dot), acc_min);
  }
  *s = hsum(_mm256_add_ps(acc, acc_min));
}

template <>
void vec_dot<DType::Q3_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m2 = _mm256_set1_epi8(3);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m128i sc8 = _mm_sub_epi8(q3_k_scales(x[i].scales), _mm_set1_epi8(32));
    const __m256i scales16 = _mm256_cvtepi8_epi16(sc8);  // -32..31
    // q = u - 4 with u = low2 + 4*hbit in 0..7, so sum sc*q*a = sum sc*u*a - 4 * sum sc*bsum.
    __m256i sumi = _mm256_slli_epi32(_mm256_madd_epi16(load256(y[i].bsums), scales16), 2);
    sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
    const __m256i hm = load256(x[i].hmask);  // bit 4h+j of byte l: high bit of element 128h+32j+l
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load256(x[i].qs + 32 * h);
      const __m256i sc = half_scales(scales16, h);
      const int8_t* a = y[i].qs + 128 * h;
      const __m256i hmh = h == 0 ? hm : _mm256_srli_epi16(hm, 4);
      auto plane = [&](__m256i low2, int j) {
        const __m256i hbit = _mm256_and_si256(_mm256_srli_epi16(hmh, j), one);
        return plane_dot(_mm256_or_si256(low2, _mm256_slli_epi16(hbit, 2)), a, sc, j);
      };
      const __m256i s0 = plane(_mm256_and_si256(q, m2), 0);
      const __m256i s1 = plane(_mm256_and_si256(_mm256_srli_epi16(q, 2), m2), 1);
      const __m256i s2 = plane(_mm256_and_si256(_mm256_srli_epi16(q, 4), m2), 2);
      const __m256i s3 = plane(_mm256_and_si256(_mm256_srli_epi16(q, 6), m2), 3);
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = hsum(acc);
}

}  // namespace ox::kernels::avx2
