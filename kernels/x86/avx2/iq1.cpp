// AVX2 dot products of IQ1_S and IQ1_M against Q8_K. Reference: quant_traits(W).vec_dot_ref
// (core/quant/iq1.cpp), whose integer sums count eighths of the scale, 8 x = d (2s + 1)
// (8 grid +- 1): the same exact sums here, times 1/8 at the end; only the float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/iq_util.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {

template <>
void vec_dot<DType::IQ1_S>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ1_S* x = static_cast<const BlockIQ1_S*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // qh[ib]: bits 12..14 the scale s, bit 15 the delta's sign. isum = sum_ib (2s + 1) (8 grid . a
    // +- sum a), the delta part from the bsums: bsums 2ib and 2ib + 1 both take +-(2s + 1).
    const __m128i qh = load128(x[i].qh);
    const __m128i ls =
        _mm_add_epi16(_mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7)), 1), _mm_set1_epi16(1));
    const __m128i neg = _mm_srai_epi16(qh, 15);
    const __m128i signed_ls = _mm_sub_epi16(_mm_xor_si128(ls, neg), neg);
    const __m256i pair_ls =
        _mm256_set_m128i(_mm_unpackhi_epi16(signed_ls, signed_ls), _mm_unpacklo_epi16(signed_ls, signed_ls));
    __m256i sumi = _mm256_madd_epi16(load256(y[i].bsums), pair_ls);
    const __m256i ls8 = _mm256_broadcastsi128_si256(_mm_slli_epi16(ls, 3));  // 8 (2s + 1), word ib
    for (int ib = 0; ib < 8; ++ib) {
      // grid (bytes -1, 0, 1) . a: vpsignb multiplies by the grid value exactly.
      const __m256i g = _mm256_sign_epi8(load256(y[i].qs + 32 * ib), iq1_s_grid(x[i], ib));
      const __m256i dot = _mm256_maddubs_epi16(one, g);
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(dot, _mm256_shuffle_epi8(ls8, word_splat_mask(ib, ib))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

template <>
void vec_dot<DType::IQ1_M>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ1_M* x = static_cast<const BlockIQ1_M*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i mults = iq1_m_mults16(x[i]);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      // 8 (grid . a) + (a with the groups' delta signs) . 1 as i16 pair sums (|.| <= 9 * 254),
      // times 2s + 1 per 16 elements. (Two vpmaddubsw beat one on 8 grid + delta: fewer vpsignb.)
      const __m256i a = load256(y[i].qs + 32 * ib);
      const __m256i grid = _mm256_maddubs_epi16(one, _mm256_sign_epi8(a, iq1_m_grid(x[i], ib)));
      const __m256i delta = _mm256_maddubs_epi16(one, apply_sign(a, iq1_m_negative_delta(x[i], ib)));
      const __m256i dot = _mm256_add_epi16(_mm256_slli_epi16(grid, 3), delta);
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(dot, _mm256_shuffle_epi8(mults, word_splat_mask(ib, ib))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(iq1_m_d(x[i])) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

}  // namespace ox::kernels::avx2
