// Building blocks of the AVX2 codebook i-quant kernels (IQ2_*, IQ3_*, IQ1_*): codebook rows into
// vectors, sign bits into byte masks, the 7-bit sign fields' parity bit. All `static inline` (see util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

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
  const __m256i spread_lo = _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202,
                                               0x0303030303030303);
  const __m256i spread_hi = _mm256_setr_epi64x(0x0404040404040404, 0x0505050505050505, 0x0606060606060606,
                                               0x0707070707070707);
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

}  // namespace ox::kernels::avx2
