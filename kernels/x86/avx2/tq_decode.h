// The ternary formats' codes unpacked to one byte per element in element order (TQ1_0: t in 0..2,
// TQ2_0: q in 0..3; the weight is the code - 1), 32 per register: shared by the dot products
// (avx2/tq.cpp, avx512/tq.cpp) and the tile kernels' panels (avx2/gemm_tq.cpp, avx512/gemm_tq.cpp).
// Element order as core/quant/tq.cpp's tq1_trits / tq2_codes. All `static inline` (see util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2::tq {

// Trit k of each TQ1_0 byte (0..2; core/quant/tq.cpp): the top of 3 * (byte * 3^k mod 256) / 256.
// AVX2 has no byte multiply, so each byte moves to the high half of its own u16 lane: there the
// 16-bit product by 3^k wraps exactly as the byte product would, and mulhi by 3 is the division.
// pow3 holds 3^k per u16 lane (both bytes of a lane share it).
static inline __m256i trits(__m256i bytes, __m256i pow3) {
  const __m256i three = _mm256_set1_epi16(3);
  const __m256i even = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_slli_epi16(bytes, 8), pow3), three);
  const __m256i odd = _mm256_mulhi_epu16(
      _mm256_mullo_epi16(_mm256_and_si256(bytes, _mm256_set1_epi16(static_cast<int16_t>(0xFF00))), pow3), three);
  return _mm256_or_si256(even, _mm256_slli_epi16(odd, 8));
}

// codes[j] = the trits of elements 32j..32j+31. qs[0..31] hold elements 32k + m (trit k);
// qs[32..47] elements 160 + 16k + m, taken in both 128-bit lanes with trits 0 | 1, then 2 | 3,
// then trit 4 beside qh; qh's four bytes repeat over that high lane, where its byte 4k + m is
// element 240 + 4k + m, trit k.
static inline void tq1_codes(const BlockTQ1_0& b, __m256i codes[8]) {
  const __m256i q0 = load256(b.qs);
  static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
  for (int k = 0; k < 5; ++k) codes[k] = trits(q0, _mm256_set1_epi16(kPow3[k]));
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  const __m256i q1 = _mm256_broadcastsi128_si256(load128(b.qs + 32));
  const __m256i q1_qh = _mm256_setr_m128i(load128(b.qs + 32), _mm_set1_epi32(static_cast<int>(qh)));
  codes[5] = trits(q1, _mm256_setr_m128i(_mm_set1_epi16(1), _mm_set1_epi16(3)));
  codes[6] = trits(q1, _mm256_setr_m128i(_mm_set1_epi16(9), _mm_set1_epi16(27)));
  codes[7] = trits(q1_qh, _mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27));
}

// codes[4j + l] = elements 128j + 32l + m, bits 2l..2l+1 of qs[32j + m].
static inline void tq2_codes(const BlockTQ2_0& b, __m256i codes[8]) {
  const __m256i m2 = _mm256_set1_epi8(3);
  for (int j = 0; j < 2; ++j) {
    const __m256i q = load256(b.qs + 32 * j);
    codes[4 * j + 0] = _mm256_and_si256(q, m2);
    codes[4 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 2), m2);
    codes[4 * j + 2] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m2);
    codes[4 * j + 3] = _mm256_and_si256(_mm256_srli_epi16(q, 6), m2);
  }
}

// The tile kernels' decode policies (a struct: a function pointer to a __m256i signature as a
// template argument drops the vector type's attributes).
struct TQ1_0Codes {
  using Block = BlockTQ1_0;
  static void decode(const Block& b, __m256i codes[8]) { tq1_codes(b, codes); }
};
struct TQ2_0Codes {
  using Block = BlockTQ2_0;
  static void decode(const Block& b, __m256i codes[8]) { tq2_codes(b, codes); }
};

}  // namespace ox::kernels::avx2::tq
