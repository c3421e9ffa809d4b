// AVX2 dot products of IQ2_XXS, IQ2_XS and IQ2_S against Q8_K. Reference: quant_traits(W).vec_dot_ref
// (core/quant/iq2.cpp). Per 64 elements: eight codebook rows (unsigned magnitudes 8, 25, 43) in two
// vectors, the signs moved onto the activations, vpmaddubsw, then vpmaddwd by 2 ls + 1. The integer
// sum per super-block is exact; the float accumulation order differs; the 1/8 comes last, as there.
#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/iq_util.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using quant::kIQ2SGrid;
using quant::kIQ2XSGrid;
using quant::kIQ2XXSGrid;

// (grid . signed activations) pair sums of 64 elements: g0 / g1 hold elements 0..31 / 32..63.
inline void grid_dots(__m256i g0, __m256i g1, uint64_t signs, const int8_t* a, __m256i* d0, __m256i* d1) {
  __m256i s0, s1;
  sign_masks(signs, &s0, &s1);
  *d0 = _mm256_maddubs_epi16(g0, apply_sign(load256(a), s0));
  *d1 = _mm256_maddubs_epi16(g1, apply_sign(load256(a + 32), s1));
}

// The IQ2_XS / IQ2_S sign field of four octets (bits 9..15 of each u16 of `q`), as 28 bits.
inline uint64_t xs_sign_fields(uint64_t q) { return _pext_u64(q, 0xFE00FE00FE00FE00ULL); }

}  // namespace

void vec_dot_iq2_xxs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ2_XXS* x = static_cast<const BlockIQ2_XXS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // Per sub-block of 32: four index bytes, then a u32 of four 7-bit sign fields and ls (bits 28..31).
    const uint8_t* q = reinterpret_cast<const uint8_t*>(x[i].qs);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      const uint32_t idx0 = load_u32(q + 8 * ib), aux0 = load_u32(q + 8 * ib + 4);
      const uint32_t idx1 = load_u32(q + 8 * ib + 8), aux1 = load_u32(q + 8 * ib + 12);
      const __m256i g0 = grid4(kIQ2XXSGrid, idx0 & 0xFF, (idx0 >> 8) & 0xFF, (idx0 >> 16) & 0xFF, idx0 >> 24);
      const __m256i g1 = grid4(kIQ2XXSGrid, idx1 & 0xFF, (idx1 >> 8) & 0xFF, (idx1 >> 16) & 0xFF, idx1 >> 24);
      __m256i d0, d1;
      grid_dots(g0, g1, signs_from_aux(aux0, aux1), y[i].qs + 32 * ib, &d0, &d1);
      const __m256i p0 = _mm256_madd_epi16(d0, _mm256_set1_epi16(static_cast<int16_t>(2 * (aux0 >> 28) + 1)));
      const __m256i p1 = _mm256_madd_epi16(d1, _mm256_set1_epi16(static_cast<int16_t>(2 * (aux1 >> 28) + 1)));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

void vec_dot_iq2_xs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ2_XS* x = static_cast<const BlockIQ2_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i scales16 = iq2_scales16(x[i].scales);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      // Per octet a u16: 9-bit codebook index, 7 sign bits above it.
      const uint64_t q0 = load_u64(x[i].qs + 4 * ib), q1 = load_u64(x[i].qs + 4 * ib + 4);
      const uint64_t m9 = 0x01FF01FF01FF01FFULL;
      const uint64_t s7 = _pdep_u64(xs_sign_fields(q0) | (xs_sign_fields(q1) << 28), 0x7F7F7F7F7F7F7F7FULL);
      __m256i d0, d1;
      grid_dots(grid4_u16(kIQ2XSGrid, q0 & m9), grid4_u16(kIQ2XSGrid, q1 & m9), even_parity_signs(s7),
                y[i].qs + 32 * ib, &d0, &d1);
      const __m256i p0 = _mm256_madd_epi16(d0, _mm256_shuffle_epi8(scales16, word_splat_mask(ib, ib)));
      const __m256i p1 = _mm256_madd_epi16(d1, _mm256_shuffle_epi8(scales16, word_splat_mask(ib + 1, ib + 1)));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

void vec_dot_iq2_s_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ2_S* x = static_cast<const BlockIQ2_S*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i scales16 = iq2_scales16(x[i].scales);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      // 10-bit index of octet 4ib + j: byte qs[4ib + j], bits 2j..2j+1 of qh[ib] as bits 8..9
      // (pdep drops each pair into the top of its u16). Full sign bytes at qs[32 + octet].
      auto index = [&](int b) {
        return _pdep_u64(load_u32(x[i].qs + 4 * b), 0x00FF00FF00FF00FFULL) |
               _pdep_u64(x[i].qh[b], 0x0300030003000300ULL);
      };
      __m256i d0, d1;
      grid_dots(grid4_u16(kIQ2SGrid, index(ib)), grid4_u16(kIQ2SGrid, index(ib + 1)),
                load_u64(x[i].qs + kQK_K / 8 + 4 * ib), y[i].qs + 32 * ib, &d0, &d1);
      const __m256i p0 = _mm256_madd_epi16(d0, _mm256_shuffle_epi8(scales16, word_splat_mask(ib, ib)));
      const __m256i p1 = _mm256_madd_epi16(d1, _mm256_shuffle_epi8(scales16, word_splat_mask(ib + 1, ib + 1)));
      sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = 0.125f * hsum(acc);
}

}  // namespace ox::kernels::avx2
