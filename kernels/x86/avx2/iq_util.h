// Building blocks of the AVX2 codebook i-quant kernels (IQ2_*, IQ3_*, IQ1_*): codebook rows into
// vectors, sign bits into byte masks, the 7-bit sign fields' parity bit. All `static inline` (see util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {

static inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

static inline uint64_t load_u64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Four 8-byte codebook entries, entry k in qword k (elements 8k..8k+7).
static inline __m256i grid4(const uint64_t* grid, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  return _mm256_set_epi64x(static_cast<int64_t>(grid[i3]), static_cast<int64_t>(grid[i2]),
                           static_cast<int64_t>(grid[i1]), static_cast<int64_t>(grid[i0]));
}

// Four 8-byte codebook entries indexed by the four u16 of `idx` (low word first).
static inline __m256i grid4_u16(const uint64_t* grid, uint64_t idx) {
  return grid4(grid, idx & 0xFFFF, (idx >> 16) & 0xFFFF, (idx >> 32) & 0xFFFF, idx >> 48);
}

// Eight 4-byte codebook entries indexed by the bytes of `idx` (IQ3_XXS): entry k in dword k.
static inline __m256i grid8_u8(const uint32_t* grid, uint64_t idx) {
  auto g = [&](int k) { return static_cast<int>(grid[(idx >> (8 * k)) & 0xFF]); };
  return _mm256_setr_epi32(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
}

// Eight 4-byte codebook entries indexed by the u16 of lo (entries 0..3) and hi (4..7).
static inline __m256i grid8_u16(const uint32_t* grid, uint64_t lo, uint64_t hi) {
  auto g = [&](uint64_t v, int k) { return static_cast<int>(grid[(v >> (16 * k)) & 0xFFFF]); };
  return _mm256_setr_epi32(g(lo, 0), g(lo, 1), g(lo, 2), g(lo, 3), g(hi, 0), g(hi, 1), g(hi, 2), g(hi, 3));
}

// ksigns_iq2xs without the table: 8 bytes of 7 stored sign bits each (bit 7 clear) get bit 7 =
// the parity of the other seven, so every byte has an even count of negatives. The xor-shifts
// fold each byte's bits into its bit 0 without reaching across bytes (bit 7 is 0 going in).
static inline uint64_t even_parity_signs(uint64_t s7) {
  uint64_t p = s7 ^ (s7 >> 4);
  p ^= p >> 2;
  p ^= p >> 1;
  return s7 | ((p & 0x0101010101010101ULL) << 7);
}

// Four 7-bit sign fields (bits 0..27 of an IQ2_XXS / IQ3_XXS aux word) of each of two words as
// eight full sign bytes, byte k = group of 8 k (word a: groups 0..3, word b: 4..7).
static inline uint64_t signs_from_aux(uint32_t a, uint32_t b) {
  const uint64_t fields = (a & 0x0FFFFFFFu) | (static_cast<uint64_t>(b & 0x0FFFFFFFu) << 28);
  return even_parity_signs(_pdep_u64(fields, 0x7F7F7F7F7F7F7F7FULL));
}

// 0xFF in each byte whose sign bit is set, for 64 elements: byte e of the 8 sign bytes `s`
// holds elements 8e..8e+7 (bit j = element 8e + j). lo = elements 0..31, hi = 32..63.
static inline void sign_masks(uint64_t s, __m256i* lo, __m256i* hi) {
  const __m256i v = _mm256_set1_epi64x(static_cast<int64_t>(s));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i spread_lo =
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303);
  const __m256i spread_hi =
      _mm256_setr_epi64x(0x0404040404040404, 0x0505050505050505, 0x0606060606060606, 0x0707070707070707);
  *lo = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, spread_lo), bit), bit);
  *hi = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(v, spread_hi), bit), bit);
}

// a negated where mask is 0xFF (exact: Q8_K activations never hold -128).
static inline __m256i apply_sign(__m256i a, __m256i mask) { return _mm256_sub_epi8(_mm256_xor_si256(a, mask), mask); }

// IQ2_XS / IQ2_S: the 16 4-bit scales ls of `scales` (8 bytes, two per byte) as 2 ls + 1 in i16
// words, ordered for word_splat_mask: the low lane holds the low nibbles (16-element groups 2ib,
// elements 32ib..32ib+15), the high lane the high nibbles (groups 2ib + 1), word ib of each.
static inline __m256i iq2_scales16(const uint8_t* scales) {
  const uint64_t v = load_u64(scales);
  const uint64_t m4 = 0x0F0F0F0F0F0F0F0FULL;
  const __m128i nib = _mm_set_epi64x(static_cast<int64_t>((v >> 4) & m4), static_cast<int64_t>(v & m4));
  return _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(nib, nib), _mm_set1_epi8(1)));
}

// ---- Unpacking, shared by the dot products and the tile kernels' panel packing.

// 64 elements (sub-blocks ib and ib + 1 of 32) of an IQ2 / IQ3 block: unsigned codebook magnitudes
// (g0: elements 0..31, g1: 32..63) and the sign bytes (byte e: bit j = element 8e + j negative).
struct IqPair {
  __m256i g0, g1;
  uint64_t signs;
};

// IQ2_XXS: per sub-block, four index bytes then a u32 of four 7-bit sign fields and ls (bits 28..31).
static inline IqPair iq2_xxs_pair(const BlockIQ2_XXS& b, int ib) {
  const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
  const uint32_t idx0 = load_u32(q), idx1 = load_u32(q + 8);
  const uint64_t* grid = quant::kIQ2XXSGrid;
  return {grid4(grid, idx0 & 0xFF, (idx0 >> 8) & 0xFF, (idx0 >> 16) & 0xFF, idx0 >> 24),
          grid4(grid, idx1 & 0xFF, (idx1 >> 8) & 0xFF, (idx1 >> 16) & 0xFF, idx1 >> 24),
          signs_from_aux(load_u32(q + 4), load_u32(q + 12))};
}
// 2 ls + 1 of IQ2_XXS sub-block ib.
static inline int iq2_xxs_mult(const BlockIQ2_XXS& b, int ib) {
  return static_cast<int>(2 * (load_u32(reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib + 4) >> 28) + 1);
}

// IQ2_XS: per octet a u16, 9-bit codebook index and 7 sign bits above it (pext gathers the four
// sign fields of a u64, pdep spreads the eight into bytes).
static inline IqPair iq2_xs_pair(const BlockIQ2_XS& b, int ib) {
  const uint64_t q0 = load_u64(b.qs + 4 * ib), q1 = load_u64(b.qs + 4 * ib + 4);
  const uint64_t m9 = 0x01FF01FF01FF01FFULL, sign_fields = 0xFE00FE00FE00FE00ULL;
  const uint64_t s7 = _pdep_u64(_pext_u64(q0, sign_fields) | (_pext_u64(q1, sign_fields) << 28), 0x7F7F7F7F7F7F7F7FULL);
  return {grid4_u16(quant::kIQ2XSGrid, q0 & m9), grid4_u16(quant::kIQ2XSGrid, q1 & m9), even_parity_signs(s7)};
}

// IQ2_S: 10-bit index of octet 4ib + j = byte qs[4ib + j] | bits 2j..2j+1 of qh[ib] as bits 8..9
// (pdep drops each pair into the top of its u16); full sign bytes at qs[32 + octet].
static inline uint64_t iq2_s_index(const BlockIQ2_S& b, int ib) {
  return _pdep_u64(load_u32(b.qs + 4 * ib), 0x00FF00FF00FF00FFULL) | _pdep_u64(b.qh[ib], 0x0300030003000300ULL);
}
static inline IqPair iq2_s_pair(const BlockIQ2_S& b, int ib) {
  return {grid4_u16(quant::kIQ2SGrid, iq2_s_index(b, ib)), grid4_u16(quant::kIQ2SGrid, iq2_s_index(b, ib + 1)),
          load_u64(b.qs + kQK_K / 8 + 4 * ib)};
}

// IQ3_XXS: qs[8ib..8ib+7] the index bytes of sub-block ib; qs[64 + 4ib] its u32 of four 7-bit
// sign fields and the scale s (bits 28..31), multiplier 2s + 1 (quarters of d (0.5 + s) / 2).
static inline uint32_t iq3_xxs_aux(const BlockIQ3_XXS& b, int ib) { return load_u32(b.qs + kQK_K / 4 + 4 * ib); }
static inline IqPair iq3_xxs_pair(const BlockIQ3_XXS& b, int ib) {
  return {grid8_u8(quant::kIQ3XXSGrid, load_u64(b.qs + 8 * ib)),
          grid8_u8(quant::kIQ3XXSGrid, load_u64(b.qs + 8 * ib + 8)),
          signs_from_aux(iq3_xxs_aux(b, ib), iq3_xxs_aux(b, ib + 1))};
}
static inline int iq3_xxs_mult(const BlockIQ3_XXS& b, int ib) {
  return static_cast<int>(2 * (iq3_xxs_aux(b, ib) >> 28) + 1);
}

// IQ3_S: 9-bit index of group l of sub-block ib = qs[8ib + l] | bit l of qh[ib] as bit 8, four
// groups (half) at a time; one sign bit per element; scale nibbles, 2j low and 2j + 1 high of scales[j].
static inline uint64_t iq3_s_index(const BlockIQ3_S& b, int ib, int half) {
  return _pdep_u64(load_u32(b.qs + 8 * ib + 4 * half), 0x00FF00FF00FF00FFULL) |
         _pdep_u64(b.qh[ib] >> (4 * half), 0x0100010001000100ULL);
}
static inline IqPair iq3_s_pair(const BlockIQ3_S& b, int ib) {
  const uint32_t* grid = quant::kIQ3SGrid;
  return {grid8_u16(grid, iq3_s_index(b, ib, 0), iq3_s_index(b, ib, 1)),
          grid8_u16(grid, iq3_s_index(b, ib + 1, 0), iq3_s_index(b, ib + 1, 1)), load_u64(b.signs + 4 * ib)};
}
static inline int iq3_s_mult(const BlockIQ3_S& b, int ib) {
  return 1 + 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF);
}

// IQ1_S sub-block ib: 11-bit index of group l = qs[4ib + l] | bits 3l..3l+2 of qh[ib] as bits
// 8..10; codebook bytes -1, 0, 1. qh bits 12..14 hold the scale s, bit 15 the delta's sign.
static inline __m256i iq1_s_grid(const BlockIQ1_S& b, int ib) {
  return grid4_u16(quant::kIQ1SGrid, _pdep_u64(load_u32(b.qs + 4 * ib), 0x00FF00FF00FF00FFULL) |
                                         _pdep_u64(b.qh[ib], 0x0700070007000700ULL));
}
static inline int iq1_s_mult(const BlockIQ1_S& b, int ib) { return 2 * ((b.qh[ib] >> 12) & 7) + 1; }

// IQ1_M sub-block ib (groups 4ib..4ib+3): index bytes qs[4ib + l]; nibble l of the u16 at
// qh + 2ib holds 3 more index bits and (bit 3) the sign of the group's delta.
static inline uint16_t iq1_m_qh(const BlockIQ1_M& b, int ib) {
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * ib, 2);
  return qh;
}
static inline __m256i iq1_m_grid(const BlockIQ1_M& b, int ib) {
  return grid4_u16(quant::kIQ1SGrid, _pdep_u64(load_u32(b.qs + 4 * ib), 0x00FF00FF00FF00FFULL) |
                                         _pdep_u64(iq1_m_qh(b, ib) & 0x7777u, 0x0F000F000F000F00ULL));
}
// All-ones qwords for the groups of IQ1_M sub-block ib whose delta is negative: bit 3 + 4l of its
// qh u16 for group l, tested in every word of qword l.
static inline __m256i iq1_m_negative_delta(const BlockIQ1_M& b, int ib) {
  const __m256i bits = _mm256_setr_epi64x(0x0008000800080008LL, 0x0080008000800080LL, 0x0800080008000800LL,
                                          static_cast<int64_t>(0x8000800080008000ULL));
  const __m256i qh = _mm256_set1_epi16(static_cast<int16_t>(iq1_m_qh(b, ib)));
  return _mm256_cmpeq_epi16(_mm256_and_si256(qh, bits), bits);
}
// 8 x grid + delta of IQ1_M sub-block ib, in -9..9 (vpsignb: 8 * grid exactly; delta +-1 per group).
static inline __m256i iq1_m_values(const BlockIQ1_M& b, int ib) {
  const __m256i delta = _mm256_or_si256(iq1_m_negative_delta(b, ib), _mm256_set1_epi8(1));
  return _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), iq1_m_grid(b, ib)), delta);
}
// IQ1_M scales: four u16, 3-bit scales s of 16 elements h in bits 3(h%4).. of u16 h/4, d's nibbles
// on top. The multipliers 2s + 1 as i16 words ordered for word_splat_mask: even h (fields at bits
// 0 and 6 of each u16) in the low lane, odd h (3, 9) in the high lane, word ib = sub-block ib.
static inline __m256i iq1_m_mults16(const BlockIQ1_M& b) {
  const uint64_t sc = load_u64(b.scales);
  const uint64_t even = _pdep_u64(_pext_u64(sc, 0x01C701C701C701C7ULL), 0x0707070707070707ULL);
  const uint64_t odd = _pdep_u64(_pext_u64(sc, 0x0E380E380E380E38ULL), 0x0707070707070707ULL);
  const __m128i ls = _mm_set_epi64x(static_cast<int64_t>(odd), static_cast<int64_t>(even));
  return _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(ls, ls), _mm_set1_epi8(1)));
}
static inline uint16_t iq1_m_d(const BlockIQ1_M& b) {
  return static_cast<uint16_t>(_pext_u64(load_u64(b.scales), 0xF000F000F000F000ULL));
}

}  // namespace ox::kernels::avx2
