// AVX2 dot products of Q6_K and IQ4_XS against Q8_K. Reference: quant_traits(Q6_K / IQ4_XS).vec_dot_ref.
// Integer sums per super-block are exact; the float accumulation order differs from the reference.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {

template <>
void vec_dot<DType::Q6_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m2hi = _mm256_set1_epi8(0x30);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(load128(x[i].scales));  // signed, sub-blocks of 16
    // q - 32 with q in 0..63: sum sc*(q-32)*a = sum sc*q*a - 32 * sum sc*bsum.
    __m256i sumi = _mm256_slli_epi32(_mm256_madd_epi16(load256(y[i].bsums), scales16), 5);
    sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
    for (int h = 0; h < 2; ++h) {
      // Half h: ql bytes 64h.. hold elements 128h+l (low nibble of byte l), +64 (high nibble),
      // +32 / +96 for bytes l+32; qh byte l holds their top 2 bits at bits 0-1, 2-3, 4-5, 6-7.
      const __m256i l0 = load256(x[i].ql + 64 * h);
      const __m256i l1 = load256(x[i].ql + 64 * h + 32);
      const __m256i qh = load256(x[i].qh + 32 * h);
      const __m256i q0 = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2hi));
      const __m256i q1 = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2hi));
      const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m2hi));
      const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2hi));
      const __m256i sc = h == 0 ? _mm256_permute2x128_si256(scales16, scales16, 0x00)
                                : _mm256_permute2x128_si256(scales16, scales16, 0x11);
      const int8_t* a = y[i].qs + 128 * h;
      auto plane = [&](__m256i q, int j) {
        const __m256i p = mul_u8s8(q, load256(a + 32 * j));
        return _mm256_madd_epi16(p, _mm256_shuffle_epi8(sc, word_splat_mask(2 * j, 2 * j + 1)));
      };
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(plane(q0, 0), plane(q1, 1)),
                                                     _mm256_add_epi32(plane(q2, 2), plane(q3, 3))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = hsum(acc);
}

template <>
void vec_dot<DType::IQ4_XS>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i table = _mm256_broadcastsi128_si256(load128(kIQ4NLValues));
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // The 8 scales as i16 words 0..7 of both lanes, for per-sub-block madd multipliers.
    const __m256i ls32 = iq4_xs_scales(x[i].scales_l, x[i].scales_h);
    const __m256i ls16 =
        _mm256_broadcastsi128_si256(_mm_packs_epi32(_mm256_castsi256_si128(ls32), _mm256_extracti128_si256(ls32, 1)));
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      // 32 bytes = sub-blocks ib (low lane) and ib+1 (high lane); within a sub-block the low
      // nibbles are elements 0..15 and the high nibbles 16..31.
      const __m256i q = load256(x[i].qs + 16 * ib);
      const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, m4));
      const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
      const __m256i w0 = _mm256_permute2x128_si256(lo, hi, 0x20);
      const __m256i w1 = _mm256_permute2x128_si256(lo, hi, 0x31);
      const __m256i p0 = mul_s8s8(w0, load256(y[i].qs + 32 * ib));
      const __m256i p1 = mul_s8s8(w1, load256(y[i].qs + 32 * ib + 32));
      const __m256i s0 = _mm256_shuffle_epi8(ls16, word_splat_mask(ib, ib));
      const __m256i s1 = _mm256_shuffle_epi8(ls16, word_splat_mask(ib + 1, ib + 1));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_madd_epi16(p0, s0), _mm256_madd_epi16(p1, s1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = hsum(acc);
}

}  // namespace ox::kernels::avx2
