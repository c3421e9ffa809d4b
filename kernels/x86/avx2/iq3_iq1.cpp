// AVX2 dot products of IQ3_XXS, IQ3_S, IQ1_S and IQ1_M against Q8_K. Reference:
// quant_traits(W).vec_dot_ref (core/quant/iq3.cpp, iq1.cpp), whose integer sums count quarters
// (IQ3_XXS) or eighths (IQ1_*) of the scale: the same exact sums here, the same power-of-two factor
// at the end; only the float accumulation order differs.
#include "core/quant/blocks.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/iq_util.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using quant::kIQ1SGrid;
using quant::kIQ3SGrid;
using quant::kIQ3XXSGrid;

// Eight 4-byte codebook entries indexed by the u16 of lo (entries 0..3) and hi (4..7).
inline __m256i grid8_u16(const uint32_t* grid, uint64_t lo, uint64_t hi) {
  auto g = [&](uint64_t v, int k) { return static_cast<int>(grid[(v >> (16 * k)) & 0xFFFF]); };
  return _mm256_setr_epi32(g(lo, 0), g(lo, 1), g(lo, 2), g(lo, 3), g(hi, 0), g(hi, 1), g(hi, 2), g(hi, 3));
}

// Sub-blocks ib (elements 0..31 of a) and ib + 1 (32..63): unsigned magnitudes g0 / g1 against
// the activations with `signs` applied, i16 pair sums times the i16 multipliers m0 / m1.
inline __m256i scaled_dots(__m256i g0, __m256i g1, uint64_t signs, const int8_t* a, __m256i m0, __m256i m1) {
  __m256i s0, s1;
  sign_masks(signs, &s0, &s1);
  const __m256i d0 = _mm256_maddubs_epi16(g0, apply_sign(load256(a), s0));
  const __m256i d1 = _mm256_maddubs_epi16(g1, apply_sign(load256(a + 32), s1));
  return _mm256_add_epi32(_mm256_madd_epi16(d0, m0), _mm256_madd_epi16(d1, m1));
}

// grid (bytes -1, 0, 1) . a as i16 pair sums: vpsignb multiplies by the grid value exactly.
inline __m256i ternary_dot(__m256i grid, __m256i a) {
  return _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_sign_epi8(a, grid));
}

}  // namespace

void vec_dot_iq3_xxs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ3_XXS* x = static_cast<const BlockIQ3_XXS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // qs[8ib..8ib+7]: the index bytes of sub-block ib; qs[64 + 4ib]: its u32 of four 7-bit sign
    // fields and the scale s (bits 28..31), multiplier 2s + 1 (quarters of d (0.5 + s) / 2).
    const uint8_t* q = x[i].qs;
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      const uint32_t aux0 = load_u32(q + kQK_K / 4 + 4 * ib), aux1 = load_u32(q + kQK_K / 4 + 4 * ib + 4);
      const __m256i g0 = grid8_u8(kIQ3XXSGrid, load_u64(q + 8 * ib));
      const __m256i g1 = grid8_u8(kIQ3XXSGrid, load_u64(q + 8 * ib + 8));
      const __m256i m0 = _mm256_set1_epi16(static_cast<int16_t>(2 * (aux0 >> 28) + 1));
      const __m256i m1 = _mm256_set1_epi16(static_cast<int16_t>(2 * (aux1 >> 28) + 1));
      sumi = _mm256_add_epi32(sumi, scaled_dots(g0, g1, signs_from_aux(aux0, aux1), y[i].qs + 32 * ib, m0, m1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.25f * hsum(acc);
}

void vec_dot_iq3_s_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ3_S* x = static_cast<const BlockIQ3_S*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      // 9-bit index of group l of sub-block b: qs[8b + l], bit l of qh[b] as bit 8 (pdep spreads
      // qh's bits to the top of four u16 at a time).
      auto index = [&](int b, int half) {
        return _pdep_u64(load_u32(x[i].qs + 8 * b + 4 * half), 0x00FF00FF00FF00FFULL) |
               _pdep_u64(x[i].qh[b] >> (4 * half), 0x0100010001000100ULL);
      };
      const __m256i g0 = grid8_u16(kIQ3SGrid, index(ib, 0), index(ib, 1));
      const __m256i g1 = grid8_u16(kIQ3SGrid, index(ib + 1, 0), index(ib + 1, 1));
      // Scale nibbles: sub-block 2j low, 2j + 1 high of scales[j]; multiplier 1 + 2s.
      const int sc = x[i].scales[ib / 2];
      const __m256i m0 = _mm256_set1_epi16(static_cast<int16_t>(1 + 2 * (sc & 0xF)));
      const __m256i m1 = _mm256_set1_epi16(static_cast<int16_t>(1 + 2 * (sc >> 4)));
      sumi = _mm256_add_epi32(sumi, scaled_dots(g0, g1, load_u64(x[i].signs + 4 * ib), y[i].qs + 32 * ib, m0, m1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = hsum(acc);
}

void vec_dot_iq1_s_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ1_S* x = static_cast<const BlockIQ1_S*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // qh[ib]: bits 0..11 the high index bits of its four groups, 12..14 the scale s, 15 the
    // delta's sign. isum = sum_ib (2s + 1) (8 grid . a +- sum a): the delta part from the bsums.
    const __m128i qh = load128(x[i].qh);
    const __m128i ls = _mm_add_epi16(_mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7)), 1),
                                     _mm_set1_epi16(1));
    const __m128i neg = _mm_srai_epi16(qh, 15);
    const __m128i signed_ls = _mm_sub_epi16(_mm_xor_si128(ls, neg), neg);
    // bsums 2ib and 2ib + 1 both take +-(2s + 1) of sub-block ib.
    const __m256i pair_ls = _mm256_set_m128i(_mm_unpackhi_epi16(signed_ls, signed_ls), _mm_unpacklo_epi16(signed_ls, signed_ls));
    __m256i sumi = _mm256_madd_epi16(load256(y[i].bsums), pair_ls);
    const __m256i ls8 = _mm256_broadcastsi128_si256(_mm_slli_epi16(ls, 3));
    for (int ib = 0; ib < 8; ib += 2) {
      // 11-bit index of group l: qs[4ib + l], bits 3l..3l+2 of qh[ib] as bits 8..10.
      auto index = [&](int b) {
        return _pdep_u64(load_u32(x[i].qs + 4 * b), 0x00FF00FF00FF00FFULL) |
               _pdep_u64(x[i].qh[b], 0x0700070007000700ULL);
      };
      const __m256i d0 = ternary_dot(grid4_u16(kIQ1SGrid, index(ib)), load256(y[i].qs + 32 * ib));
      const __m256i d1 = ternary_dot(grid4_u16(kIQ1SGrid, index(ib + 1)), load256(y[i].qs + 32 * ib + 32));
      const __m256i p0 = _mm256_madd_epi16(d0, _mm256_shuffle_epi8(ls8, word_splat_mask(ib, ib)));
      const __m256i p1 = _mm256_madd_epi16(d1, _mm256_shuffle_epi8(ls8, word_splat_mask(ib + 1, ib + 1)));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

void vec_dot_iq1_m_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ1_M* x = static_cast<const BlockIQ1_M*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i eight = _mm256_set1_epi8(8);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // scales: four u16, 3-bit scales of 16 elements h in bits 3(h%4).. of u16 h/4, d's nibbles on top.
    // Even h (fields at bits 0 and 6 of each u16) go to the low lane's words, odd h (3, 9) to the
    // high lane's, so word ib of each lane is the multiplier 2s + 1 of one half of sub-block ib.
    const uint64_t sc = load_u64(x[i].scales);
    const uint16_t d = static_cast<uint16_t>(_pext_u64(sc, 0xF000F000F000F000ULL));
    const uint64_t even = _pdep_u64(_pext_u64(sc, 0x01C701C701C701C7ULL), 0x0707070707070707ULL);
    const uint64_t odd = _pdep_u64(_pext_u64(sc, 0x0E380E380E380E38ULL), 0x0707070707070707ULL);
    const __m128i ls = _mm_set_epi64x(static_cast<int64_t>(odd), static_cast<int64_t>(even));
    const __m256i ls16 = _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(ls, ls), _mm_set1_epi8(1)));
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      // Groups 4ib..4ib+3: index bytes qs[4ib + l]; nibble l of the u16 at qh + 2ib holds 3 more
      // index bits and (bit 3) the sign of the group's delta.
      uint16_t qh;
      std::memcpy(&qh, x[i].qh + 2 * ib, 2);
      const uint64_t index = _pdep_u64(load_u32(x[i].qs + 4 * ib), 0x00FF00FF00FF00FFULL) |
                             _pdep_u64(qh & 0x7777u, 0x0F000F000F000F00ULL);
      const uint32_t neg = static_cast<uint32_t>(_pdep_u64(_pext_u32(qh, 0x8888u), 0x01010101ULL)) * 0xFFu;
      const __m256i delta = _mm256_or_si256(_mm256_cvtepi8_epi64(_mm_cvtsi32_si128(static_cast<int>(neg))), one);
      // Weights 8 grid + delta in -9..9 (vpsignb: 8 * grid exactly), then |w| . (a with w's sign).
      const __m256i w = _mm256_add_epi8(_mm256_sign_epi8(eight, grid4_u16(kIQ1SGrid, index)), delta);
      const __m256i a = load256(y[i].qs + 32 * ib);
      const __m256i dot = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(dot, _mm256_shuffle_epi8(ls16, word_splat_mask(ib, ib))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

}  // namespace ox::kernels::avx2
