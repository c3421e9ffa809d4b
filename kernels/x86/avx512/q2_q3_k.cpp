// AVX-512 VNNI dot products of Q2_K and Q3_K against Q8_K. Byte l of 32-byte half h holds
// elements 128h + 32j + l at bits 2j..2j+1; a vector takes planes (0,1) or (2,3) of a half
// = 64 consecutive elements = four 16-element sub-blocks, whose scales vpdpwssd applies.
// Reference: quant_traits(Q2_K / Q3_K).vec_dot_ref; integer parts exact.
#include "core/quant/blocks.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

// Per-16-bit-word shift counts: `lo` for the low 256 bits, `hi` for the high 256 bits.
inline __m512i shift_counts(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(lo)), _mm256_set1_epi16(static_cast<int16_t>(hi)),
                            1);
}

inline __m512i planes_dot(__m512i sumi, __m512i q, const int8_t* a, __m512i scales16, __m512i idx) {
  const __m512i p = _mm512_maddubs_epi16(q, load512(a));
  return _mm512_dpwssd_epi32(sumi, p, _mm512_permutexvar_epi16(idx, scales16));
}

}  // namespace

template <>
void vec_dot<DType::Q2_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i m2 = _mm512_set1_epi8(3);
  const __m512i shift01 = shift_counts(0, 2), shift23 = shift_counts(4, 6);
  const __m512i idx[4] = {word_quad_index(0), word_quad_index(4), word_quad_index(8), word_quad_index(12)};
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m128i packed = load128(x[i].scales);  // low nibble scale, high nibble min
    const __m512i scales16 = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(packed, m4)));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
    const __m256i min_dot = _mm256_madd_epi16(load256(y[i].bsums), mins16);
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i q = _mm512_broadcast_i64x4(load256(x[i].qs + 32 * h));
      const int8_t* a = y[i].qs + 128 * h;
      sumi = planes_dot(sumi, _mm512_and_si512(_mm512_srlv_epi16(q, shift01), m2), a, scales16, idx[2 * h]);
      sumi = planes_dot(sumi, _mm512_and_si512(_mm512_srlv_epi16(q, shift23), m2), a + 64, scales16, idx[2 * h + 1]);
    }
    const float dy = y[i].d;
    acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(min_dot), acc_min);
  }
  *s = hsum512(acc) + avx2::hsum(acc_min);
}

template <>
void vec_dot<DType::Q3_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i m2 = _mm512_set1_epi8(3);
  const __m512i four = _mm512_set1_epi8(4);
  const __m512i shift01 = shift_counts(0, 2), shift23 = shift_counts(4, 6);
  const __m512i idx[4] = {word_quad_index(0), word_quad_index(4), word_quad_index(8), word_quad_index(12)};
  // hmask bit 4h+j of byte l is the high bit of element 128h + 32j + l.
  __m512i hbit[4];
  for (int p = 0; p < 4; ++p) {
    hbit[p] = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * p))),
                                 _mm256_set1_epi8(static_cast<char>(1 << (2 * p + 1))), 1);
  }
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m128i sc8 = _mm_sub_epi8(avx2::q3_k_scales(x[i].scales), _mm_set1_epi8(32));
    const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);  // -32..31
    // q = u - 4 (u = low2 + 4 * hbit): start from -4 * sum sc * bsum, zero-extended to 512 bits.
    const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load256(y[i].bsums), sc16), 2);
    __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
    const __m512i scales16 = _mm512_castsi256_si512(sc16);
    const __m512i hm = _mm512_broadcast_i64x4(load256(x[i].hmask));
    for (int h = 0; h < 2; ++h) {
      const __m512i q = _mm512_broadcast_i64x4(load256(x[i].qs + 32 * h));
      const int8_t* a = y[i].qs + 128 * h;
      __m512i u01 = _mm512_and_si512(_mm512_srlv_epi16(q, shift01), m2);
      __m512i u23 = _mm512_and_si512(_mm512_srlv_epi16(q, shift23), m2);
      u01 = _mm512_mask_add_epi8(u01, _mm512_test_epi8_mask(hm, hbit[2 * h]), u01, four);
      u23 = _mm512_mask_add_epi8(u23, _mm512_test_epi8_mask(hm, hbit[2 * h + 1]), u23, four);
      sumi = planes_dot(sumi, u01, a, scales16, idx[2 * h]);
      sumi = planes_dot(sumi, u23, a + 64, scales16, idx[2 * h + 1]);
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
  }
  *s = hsum512(acc);
}

}  // namespace ox::kernels::avx512
