// Block loaders of the tile kernels: the quants of one block of 8 rows, unpacked to one byte per
// element and transposed so that q[k] lane r holds elements 4k..4k+3 of row r (the layout
// gemm_tile.h's panels use). The AVX-512 kernels build their 16-row panels from two of these.
#pragma once

#include <immintrin.h>

#include <cstddef>  // offsetof (clang: not reached through <cstring>)
#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2::pack {

// The 8 rows' blocks of a chunk, `block_bytes` apart: pointers `offset` bytes into block b.
struct Rows {
  const uint8_t* const* rows;
  uint64_t block_bytes;
  void at(int64_t b, uint64_t offset, const uint8_t* out[8]) const {
    for (int r = 0; r < 8; ++r) out[r] = rows[r] + static_cast<uint64_t>(b) * block_bytes + offset;
  }
};

// 16 bytes of packed nibbles per row (low nibbles = elements 0..15, high = 16..31): q[0..8), 0..15.
static inline void nibbles(const uint8_t* const qs[8], __m256i q[8]) {
  __m256i v[4];
  tile::transpose8x4(qs, v);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm256_and_si256(v[k], m4);
    q[4 + k] = _mm256_and_si256(_mm256_srli_epi16(v[k], 4), m4);
  }
}

// 32 bytes per row, transposed as they are (Q8_0 quants, or any 32-byte plane).
static inline void bytes32(const uint8_t* const src[8], __m256i q[8]) {
  __m256i row[8];
  for (int r = 0; r < 8; ++r) row[r] = load256(src[r]);
  tile::transpose8x8(row, q);
}

// Q5_0 / Q5_1: nibbles plus the 5th bit (bit e of the little-endian u32 qh = element e): 0..31.
static inline void q5_values(const uint8_t* const qh[8], const uint8_t* const qs[8], __m256i q[8]) {
  nibbles(qs, q);
  alignas(32) uint32_t h[8];
  for (int r = 0; r < 8; ++r) std::memcpy(&h[r], qh[r], 4);
  const __m256i hv = _mm256_load_si256(reinterpret_cast<const __m256i*>(h));
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (int k = 0; k < 8; ++k) {
    // Bits 4k..4k+3 sit in byte k/2 of each lane's word: spread it over the lane's 4 bytes.
    const char byte = static_cast<char>(k / 2);
    const __m256i idx = _mm256_setr_epi8(byte, byte, byte, byte, 4 + byte, 4 + byte, 4 + byte, 4 + byte, 8 + byte,
                                         8 + byte, 8 + byte, 8 + byte, 12 + byte, 12 + byte, 12 + byte, 12 + byte, byte,
                                         byte, byte, byte, 4 + byte, 4 + byte, 4 + byte, 4 + byte, 8 + byte, 8 + byte,
                                         8 + byte, 8 + byte, 12 + byte, 12 + byte, 12 + byte, 12 + byte);
    const __m256i bit = _mm256_set1_epi32(static_cast<int>(0x08040201u << (4 * (k % 2))));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(hv, idx), bit), bit);
    q[k] = _mm256_or_si256(q[k], _mm256_and_si256(set, sixteen));
  }
}

// The same bytes `offset` into each of 8 blocks (super-block loaders below).
template <typename Block>
static inline void block_bytes32(const Block* const x[8], uint64_t offset, __m256i q[8]) {
  const uint8_t* src[8];
  for (int r = 0; r < 8; ++r) src[r] = reinterpret_cast<const uint8_t*>(x[r]) + offset;
  bytes32(src, q);
}

// Q4_K: qs chunk c (32 bytes) holds elements 64c + l (low nibble) and 64c + 32 + l (high): 0..15.
static inline void q4_k_values(const BlockQ4_K* const x[8], __m256i q[64]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int c = 0; c < 4; ++c) {
    __m256i v[8];
    block_bytes32(x, offsetof(BlockQ4_K, qs) + 32 * c, v);
    for (int k = 0; k < 8; ++k) {
      q[16 * c + k] = _mm256_and_si256(v[k], m4);
      q[16 * c + 8 + k] = _mm256_and_si256(_mm256_srli_epi16(v[k], 4), m4);
    }
  }
}

// Q5_K: as Q4_K plus bit j of qh byte l = 5th bit of element 32j + l: 0..31.
static inline void q5_k_values(const BlockQ5_K* const x[8], __m256i q[64]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), sixteen = _mm256_set1_epi8(16);
  __m256i h[8];
  block_bytes32(x, offsetof(BlockQ5_K, qh), h);
  for (int c = 0; c < 4; ++c) {
    __m256i v[8];
    block_bytes32(x, offsetof(BlockQ5_K, qs) + 32 * c, v);
    const __m256i bit_lo = _mm256_set1_epi8(static_cast<char>(1 << (2 * c)));
    const __m256i bit_hi = _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1)));
    for (int k = 0; k < 8; ++k) {
      const __m256i hl = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h[k], bit_lo), bit_lo), sixteen);
      const __m256i hh = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h[k], bit_hi), bit_hi), sixteen);
      q[16 * c + k] = _mm256_or_si256(_mm256_and_si256(v[k], m4), hl);
      q[16 * c + 8 + k] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v[k], 4), m4), hh);
    }
  }
}

// Q6_K (unsigned 0..63; the -32 is the caller's): half h has ql bytes 64h + l = elements 128h + l
// (low nibble) and +64 (high), bytes 64h + 32 + l = +32 and +96, qh byte 32h + l their top bits
// at 0-1, 2-3, 4-5, 6-7.
static inline void q6_k_values(const BlockQ6_K* const x[8], __m256i q[64]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    __m256i a[8], b[8], t[8];
    block_bytes32(x, offsetof(BlockQ6_K, ql) + 64 * h, a);
    block_bytes32(x, offsetof(BlockQ6_K, ql) + 64 * h + 32, b);
    block_bytes32(x, offsetof(BlockQ6_K, qh) + 32 * h, t);
    __m256i* w = &q[32 * h];
    for (int k = 0; k < 8; ++k) {
      auto top = [&](int shift) { return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(t[k], shift), m3), 4); };
      w[k] = _mm256_or_si256(_mm256_and_si256(a[k], m4), top(0));
      w[8 + k] = _mm256_or_si256(_mm256_and_si256(b[k], m4), top(2));
      w[16 + k] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a[k], 4), m4), top(4));
      w[24 + k] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b[k], 4), m4), top(6));
    }
  }
}

// Q3_K (unsigned 0..7 = q + 4): element 128h + 32j + l has bits 2j of qs byte 32h + l and, times
// 4, bit 4h + j of hmask byte l.
static inline void q3_k_values(const BlockQ3_K* const x[8], __m256i q[64]) {
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  __m256i hm[8];
  block_bytes32(x, offsetof(BlockQ3_K, hmask), hm);
  for (int h = 0; h < 2; ++h) {
    __m256i v[8];
    block_bytes32(x, offsetof(BlockQ3_K, qs) + 32 * h, v);
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 8; ++k) {
        const __m256i low2 = _mm256_and_si256(_mm256_srli_epi16(v[k], 2 * j), m3);
        const __m256i hbit = _mm256_and_si256(_mm256_srli_epi16(hm[k], 4 * h + j), one);
        q[32 * h + 8 * j + k] = _mm256_or_si256(low2, _mm256_slli_epi16(hbit, 2));
      }
    }
  }
}

// Q2_K (0..3): element 128h + 32j + l = bits 2j of qs byte 32h + l.
static inline void q2_k_values(const BlockQ2_K* const x[8], __m256i q[64]) {
  const __m256i m3 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    __m256i v[8];
    block_bytes32(x, offsetof(BlockQ2_K, qs) + 32 * h, v);
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 8; ++k) q[32 * h + 8 * j + k] = _mm256_and_si256(_mm256_srli_epi16(v[k], 2 * j), m3);
    }
  }
}

// IQ4_XS (signed table values): qs bytes 16ib + l hold elements 32ib + l (low nibble) and
// 32ib + 16 + l (high), l < 16.
static inline void iq4_xs_values(const BlockIQ4_XS* const x[8], __m256i q[64]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i table = _mm256_broadcastsi128_si256(load128(kIQ4NLValues));
  for (int ib = 0; ib < 8; ib += 2) {
    __m256i v[8];
    block_bytes32(x, offsetof(BlockIQ4_XS, qs) + 16 * ib, v);
    for (int k = 0; k < 8; ++k) {
      const int e = 8 * (ib + k / 4) + k % 4;  // vector of the low nibbles
      q[e] = _mm256_shuffle_epi8(table, _mm256_and_si256(v[k], m4));
      q[e + 4] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v[k], 4), m4));
    }
  }
}

// 128 * (sum of the bytes of q[0..n) per lane), any signed bytes: the u8-bias correction of
// weights multiplied against activations + 128.
static inline __m256i bias_correction(const __m256i* q, int n) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  __m256i s = _mm256_maddubs_epi16(ones8, q[0]);  // i16: 2 bytes each, at most 8 * 2 * 128 in all
  for (int k = 1; k < n; ++k) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(ones8, q[k]));
  return _mm256_slli_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), 7);
}

// Lane r = (values[r][j], values[r][j]) as i16 halves (madd multipliers), j < count.
template <typename V>
static inline void lane_pairs(const V values[8][16], int count, __m256i* out) {
  for (int j = 0; j < count; ++j) {
    alignas(32) int32_t lanes[8];
    for (int r = 0; r < 8; ++r) {
      const uint32_t v = static_cast<uint16_t>(static_cast<int16_t>(values[r][j]));
      lanes[r] = static_cast<int32_t>(v | (v << 16));
    }
    out[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
}

// Lane r = (values[r][2i], values[r][2i + 1]) as i16 halves, i < 8 (against Q8_K bsum pairs).
template <typename V>
static inline void lane_pair_halves(const V values[8][16], __m256i out[8]) {
  for (int i = 0; i < 8; ++i) {
    alignas(32) int32_t lanes[8];
    for (int r = 0; r < 8; ++r) {
      const uint32_t lo = static_cast<uint16_t>(static_cast<int16_t>(values[r][2 * i]));
      const uint32_t hi = static_cast<uint16_t>(static_cast<int16_t>(values[r][2 * i + 1]));
      lanes[r] = static_cast<int32_t>(lo | (hi << 16));
    }
    out[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
}

}  // namespace ox::kernels::avx2::pack
