// The codebook i-quants' super-blocks decoded for the tile kernels' panels (kernels/x86/avx2/gemm_iq.cpp,
// kernels/x86/avx512/gemm_iq.cpp), from the unpacking of iq_util.h. All `static inline` (see util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/iq_util.h"

namespace ox::kernels::avx2 {

// Whole super-blocks: w[0..255] = each element in the units of the reference's integer sum (grid *
// sign; 8 grid +- 1 for IQ1), mult[g] = the multiplier of elements 16g..16g+15; returns the fp16 d.
// w must be 32-byte aligned.

// IQ2 / IQ3: codebook magnitudes with their signs applied, 64 elements at a time.
template <typename Block, IqPair (*kPair)(const Block&, int)>
static inline void iq_signed_values(const Block& b, int8_t* w) {
  for (int ib = 0; ib < 8; ib += 2) {
    const IqPair q = kPair(b, ib);
    __m256i s0, s1;
    sign_masks(q.signs, &s0, &s1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w + 32 * ib), apply_sign(q.g0, s0));
    _mm256_store_si256(reinterpret_cast<__m256i*>(w + 32 * ib + 32), apply_sign(q.g1, s1));
  }
}

// mult[0..15] from 16 bytes of scale fields s (natural group order): 2 s + 1.
static inline void store_mults(int16_t* mult, __m128i s) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(mult),
                      _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(s, s), _mm_set1_epi8(1))));
}
// The same from one scale field per sub-block of 32 (byte ib of s8), each for both of its groups.
static inline void store_sub_block_mults(int16_t* mult, uint64_t s8) {
  const __m128i v = _mm_cvtsi64_si128(static_cast<int64_t>(s8));
  store_mults(mult, _mm_unpacklo_epi8(v, v));
}
// Scale nibbles, two per byte, low nibble first (IQ2_XS and IQ2_S: 8 bytes, one per group; IQ3_S:
// 4 bytes, one per sub-block), as bytes in nibble order.
static inline __m128i nibbles_in_order(uint64_t v) {
  const uint64_t m4 = 0x0F0F0F0F0F0F0F0FULL;
  return _mm_unpacklo_epi8(_mm_cvtsi64_si128(static_cast<int64_t>(v & m4)),
                           _mm_cvtsi64_si128(static_cast<int64_t>((v >> 4) & m4)));
}

static inline uint16_t iq2_xxs_decode(const BlockIQ2_XXS& b, int8_t* w, int16_t* mult) {
  iq_signed_values<BlockIQ2_XXS, iq2_xxs_pair>(b, w);
  uint64_t ls = 0;
  for (int ib = 0; ib < 8; ++ib)
    ls |= static_cast<uint64_t>(load_u32(reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib + 4) >> 28) << (8 * ib);
  store_sub_block_mults(mult, ls);
  return b.d;
}
static inline uint16_t iq2_xs_decode(const BlockIQ2_XS& b, int8_t* w, int16_t* mult) {
  iq_signed_values<BlockIQ2_XS, iq2_xs_pair>(b, w);
  store_mults(mult, nibbles_in_order(load_u64(b.scales)));
  return b.d;
}
static inline uint16_t iq2_s_decode(const BlockIQ2_S& b, int8_t* w, int16_t* mult) {
  iq_signed_values<BlockIQ2_S, iq2_s_pair>(b, w);
  store_mults(mult, nibbles_in_order(load_u64(b.scales)));
  return b.d;
}
static inline uint16_t iq3_xxs_decode(const BlockIQ3_XXS& b, int8_t* w, int16_t* mult) {
  iq_signed_values<BlockIQ3_XXS, iq3_xxs_pair>(b, w);
  // The four-bit scales in the top of the eight aux words: shift them to the bottom, pack to bytes.
  const __m256i s = _mm256_srli_epi32(load256(b.qs + kQK_K / 4), 28);
  const __m128i s16 = _mm_packus_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  store_sub_block_mults(mult, static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(s16, s16))));
  return b.d;
}
static inline uint16_t iq3_s_decode(const BlockIQ3_S& b, int8_t* w, int16_t* mult) {
  iq_signed_values<BlockIQ3_S, iq3_s_pair>(b, w);
  store_sub_block_mults(mult, static_cast<uint64_t>(_mm_cvtsi128_si64(nibbles_in_order(load_u32(b.scales)))));
  return b.d;
}
// IQ1_S: the delta's sign per sub-block (qh bit 15), the scale in qh bits 12..14.
static inline uint16_t iq1_s_decode(const BlockIQ1_S& b, int8_t* w, int16_t* mult) {
  for (int ib = 0; ib < 8; ++ib) {
    const __m256i delta = _mm256_set1_epi8(b.qh[ib] & 0x8000 ? -1 : 1);
    const __m256i v = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), iq1_s_grid(b, ib)), delta);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w + 32 * ib), v);
  }
  const __m128i s = _mm_and_si128(_mm_srli_epi16(load128(b.qh), 12), _mm_set1_epi16(7));
  store_sub_block_mults(mult, static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(s, s))));
  return b.d;
}
// IQ1_M: the delta's sign per 8 elements, a multiplier per 16 (even groups' fields at bits 0 and 6
// of each scales u16, odd groups' at 3 and 9: interleaved back into group order).
static inline uint16_t iq1_m_decode(const BlockIQ1_M& b, int8_t* w, int16_t* mult) {
  for (int ib = 0; ib < 8; ++ib) _mm256_store_si256(reinterpret_cast<__m256i*>(w + 32 * ib), iq1_m_values(b, ib));
  const uint64_t sc = load_u64(b.scales);
  const uint64_t even = _pdep_u64(_pext_u64(sc, 0x01C701C701C701C7ULL), 0x0707070707070707ULL);
  const uint64_t odd = _pdep_u64(_pext_u64(sc, 0x0E380E380E380E38ULL), 0x0707070707070707ULL);
  store_mults(mult, _mm_unpacklo_epi8(_mm_cvtsi64_si128(static_cast<int64_t>(even)),
                                      _mm_cvtsi64_si128(static_cast<int64_t>(odd))));
  return iq1_m_d(b);
}

}  // namespace ox::kernels::avx2
