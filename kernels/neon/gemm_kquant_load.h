// Block loaders of the K-quants and IQ4_XS for the NEON tile kernels (gemm_kquant_impl.h and
// dotprod/gemm_lanes.h): each gives a super-block's unit scales (and mins) and unpacks one unit
// (16 or 32 elements) of a row to signed int8 lanes. Element layouts: core/quant/blocks.h.
#pragma once

#include <cstddef>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/neon/gemm_tile.h"

namespace ox::kernels::neon_common {
namespace {

// Loader contract: kBytes, kD (fp16 d offset), kHasMin with kDmin and mins(); kUnits scaled
// sub-blocks of 16 * kVecs elements, unit u covering elements [16 * kVecs * u, +16 * kVecs);
// units are visited as kGroups runtime groups of kPerGroup compile-time ones (units of a
// group share loads and get immediate shifts), unit(g, k) naming the unit; scales(b) = the
// units' scales as int8 lanes; unpack<k>(b, g, w) = unit(g, k)'s signed weights. Formats with
// mins give them twice: mins() per bsums lane (16), min_terms() per unit (kMinTerms = 8 or 16,
// whose terms the SDOT lane tiles pair with bsums or pairs of bsums). kUnrollGroups: whether
// the row-lane tiles unroll the group loop (measured by instruction counts under qemu).

// Q4_K / Q5_K scales and mins, 6 bits each, as u64s of 8 bytes (unit j in byte j).
inline void k4_scales_mins(const uint8_t* p, uint64_t& sc, uint64_t& mn) {
  uint32_t a[3];  // three scalar loads: a 12-byte memcpy into an array goes through the stack
  std::memcpy(&a[0], p, 4);
  std::memcpy(&a[1], p + 4, 4);
  std::memcpy(&a[2], p + 8, 4);
  const uint32_t s0 = a[0] & 0x3f3f3f3fu, s1 = (a[2] & 0x0f0f0f0fu) | (((a[0] >> 6) & 0x03030303u) << 4);
  const uint32_t m0 = a[1] & 0x3f3f3f3fu, m1 = ((a[2] >> 4) & 0x0f0f0f0fu) | (((a[1] >> 6) & 0x03030303u) << 4);
  sc = s0 | (static_cast<uint64_t>(s1) << 32);
  mn = m0 | (static_cast<uint64_t>(m1) << 32);
}

// A unit of 32 has two bsums (of 16): each min goes to both of its lanes.
inline void k4_mins(const uint8_t* scales, int16x8_t& lo, int16x8_t& hi) {
  uint64_t sc, mn;
  k4_scales_mins(scales, sc, mn);
  const uint8x8_t m = vcreate_u8(mn);
  lo = vreinterpretq_s16_u16(vmovl_u8(vzip1_u8(m, m)));
  hi = vreinterpretq_s16_u16(vmovl_u8(vzip2_u8(m, m)));
}

// The 8 mins, one per unit.
inline int16x8_t k4_unit_mins(const uint8_t* scales) {
  uint64_t sc, mn;
  k4_scales_mins(scales, sc, mn);
  return vreinterpretq_s16_u16(vmovl_u8(vcreate_u8(mn)));
}

inline int8x16_t k4_scales(const uint8_t* scales) {
  uint64_t sc, mn;
  k4_scales_mins(scales, sc, mn);
  return vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(sc), vcreate_u64(0)));
}

// Q2_K / Q3_K / Q6_K: group g = 2h + t, k = j; unit 8h + 2j + t = elements 128h + 32j + 16t..
inline int unit_16(int g, int k) { return 8 * (g >> 1) + 2 * k + (g & 1); }

struct LoadQ2_K {
  static constexpr uint64_t kBytes = sizeof(BlockQ2_K), kD = offsetof(BlockQ2_K, d), kDmin = offsetof(BlockQ2_K, dmin);
  static constexpr bool kHasMin = true;
  static constexpr int kUnits = 16, kVecs = 1, kGroups = 4, kPerGroup = 4;
  static constexpr bool kUnrollGroups = true;
  static int unit(int g, int k) { return unit_16(g, k); }
  static int8x16_t scales(const uint8_t* b) {  // low nibble of byte u
    return vreinterpretq_s8_u8(vandq_u8(vld1q_u8(b + offsetof(BlockQ2_K, scales)), vdupq_n_u8(0x0F)));
  }
  static void mins(const uint8_t* b, int16x8_t& lo, int16x8_t& hi) {  // high nibble of byte u
    const uint8x16_t m = vshrq_n_u8(vld1q_u8(b + offsetof(BlockQ2_K, scales)), 4);
    lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(m)));
    hi = vreinterpretq_s16_u16(vmovl_high_u8(m));
  }
  static constexpr int kMinTerms = 16;
  static void min_terms(const uint8_t* b, int16x8_t m[2]) { mins(b, m[0], m[1]); }
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {  // bits 2k..2k+1 of qs[32h + 16t + l]
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ2_K, qs) + 16 * g);
    w[0] = vreinterpretq_s8_u8(vandq_u8(shr_u8<2 * k>(q), vdupq_n_u8(3)));
  }
};

struct LoadQ3_K {
  static constexpr uint64_t kBytes = sizeof(BlockQ3_K), kD = offsetof(BlockQ3_K, d), kDmin = 0;
  static constexpr bool kHasMin = false;
  static constexpr int kUnits = 16, kVecs = 1, kGroups = 4, kPerGroup = 4;
  static constexpr bool kUnrollGroups = true;
  static int unit(int g, int k) { return unit_16(g, k); }
  static int8x16_t scales(const uint8_t* b) { return q3_k_scales(b + offsetof(BlockQ3_K, scales)); }
  static void mins(const uint8_t*, int16x8_t&, int16x8_t&) {}
  static constexpr int kMinTerms = 0;
  static void min_terms(const uint8_t*, int16x8_t[2]) {}
  // q = low 2 bits - 4 where bit 4h + k of hmask[16t + l] is clear.
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ3_K, qs) + 16 * g);
    const uint8x16_t hm = vld1q_u8(b + offsetof(BlockQ3_K, hmask) + 16 * (g & 1));
    const uint8x16_t low = vandq_u8(shr_u8<2 * k>(q), vdupq_n_u8(3));
    const uint8x16_t set = vtstq_u8(hm, vdupq_n_u8(static_cast<uint8_t>(1u << (4 * (g >> 1) + k))));
    w[0] = vsubq_s8(vreinterpretq_s8_u8(low), vreinterpretq_s8_u8(vbicq_u8(vdupq_n_u8(4), set)));
  }
};

struct LoadQ6_K {
  static constexpr uint64_t kBytes = sizeof(BlockQ6_K), kD = offsetof(BlockQ6_K, d), kDmin = 0;
  static constexpr bool kHasMin = false;
  static constexpr int kUnits = 16, kVecs = 1, kGroups = 4, kPerGroup = 4;
  static constexpr bool kUnrollGroups = true;
  static int unit(int g, int k) { return unit_16(g, k); }
  static int8x16_t scales(const uint8_t* b) {
    return vld1q_s8(reinterpret_cast<const int8_t*>(b + offsetof(BlockQ6_K, scales)));
  }
  static void mins(const uint8_t*, int16x8_t&, int16x8_t&) {}
  static constexpr int kMinTerms = 0;
  static void min_terms(const uint8_t*, int16x8_t[2]) {}
  // Low nibble (k < 2) or high nibble of ql[64h + 32(k & 1) + 16t + l], bits 2k..2k+1 of
  // qh[32h + 16t + l] above it (vsli keeps the nibble), minus 32.
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {
    const int h = g >> 1, t = g & 1;
    const uint8x16_t l = vld1q_u8(b + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k & 1) + 16 * t);
    const uint8x16_t qh = vld1q_u8(b + offsetof(BlockQ6_K, qh) + 32 * h + 16 * t);
    const uint8x16_t nib = k < 2 ? l : vshrq_n_u8(l, 4);
    const uint8x16_t top = k < 3 ? vandq_u8(shr_u8<2 * k>(qh), vdupq_n_u8(3)) : vshrq_n_u8(qh, 6);
    w[0] = vsubq_s8(vreinterpretq_s8_u8(vsliq_n_u8(nib, top, 4)), vdupq_n_s8(32));
  }
};

// Q4_K / Q5_K: group c = 32 qs bytes; unit 2c = their low nibbles, 2c + 1 the high ones.
struct LoadQ4_K {
  static constexpr uint64_t kBytes = sizeof(BlockQ4_K), kD = offsetof(BlockQ4_K, d), kDmin = offsetof(BlockQ4_K, dmin);
  static constexpr bool kHasMin = true;
  static constexpr int kUnits = 8, kVecs = 2, kGroups = 4, kPerGroup = 2;
  static constexpr bool kUnrollGroups = true;
  static int unit(int g, int k) { return 2 * g + k; }
  static int8x16_t scales(const uint8_t* b) { return k4_scales(b + offsetof(BlockQ4_K, scales)); }
  static void mins(const uint8_t* b, int16x8_t& lo, int16x8_t& hi) { k4_mins(b + offsetof(BlockQ4_K, scales), lo, hi); }
  static constexpr int kMinTerms = 8;
  static void min_terms(const uint8_t* b, int16x8_t m[2]) { m[0] = k4_unit_mins(b + offsetof(BlockQ4_K, scales)); }
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    for (int v = 0; v < 2; ++v) {
      const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ4_K, qs) + 32 * g + 16 * v);
      w[v] = vreinterpretq_s8_u8(k == 0 ? vandq_u8(q, vdupq_n_u8(0x0F)) : vshrq_n_u8(q, 4));
    }
  }
};

struct LoadQ5_K {
  static constexpr uint64_t kBytes = sizeof(BlockQ5_K), kD = offsetof(BlockQ5_K, d), kDmin = offsetof(BlockQ5_K, dmin);
  static constexpr bool kHasMin = true;
  static constexpr int kUnits = 8, kVecs = 2, kGroups = 4, kPerGroup = 2;
  static constexpr bool kUnrollGroups = false;
  static int unit(int g, int k) { return 2 * g + k; }
  static int8x16_t scales(const uint8_t* b) { return k4_scales(b + offsetof(BlockQ5_K, scales)); }
  static void mins(const uint8_t* b, int16x8_t& lo, int16x8_t& hi) { k4_mins(b + offsetof(BlockQ5_K, scales), lo, hi); }
  static constexpr int kMinTerms = 8;
  static void min_terms(const uint8_t* b, int16x8_t m[2]) { m[0] = k4_unit_mins(b + offsetof(BlockQ5_K, scales)); }
  // Bit 2c + k of qh[l] is the 5th bit of element l of unit 2c + k: isolated as 0/1 and
  // inserted above the nibble by vsli (which keeps the low nibble of q for k = 0).
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const int8x16_t down = vdupq_n_s8(static_cast<int8_t>(-(2 * g + k)));
    for (int v = 0; v < 2; ++v) {
      const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ5_K, qs) + 32 * g + 16 * v);
      const uint8x16_t qh = vld1q_u8(b + offsetof(BlockQ5_K, qh) + 16 * v);
      const uint8x16_t bit = vandq_u8(vshlq_u8(qh, down), vdupq_n_u8(1));
      w[v] = vreinterpretq_s8_u8(vsliq_n_u8(k == 0 ? q : vshrq_n_u8(q, 4), bit, 4));
    }
  }
};

// IQ4_XS: unit ib = 16 qs bytes, low nibbles elements 32ib..+15, high ones 32ib+16..+31.
struct LoadIQ4_XS {
  static constexpr uint64_t kBytes = sizeof(BlockIQ4_XS), kD = offsetof(BlockIQ4_XS, d), kDmin = 0;
  static constexpr bool kHasMin = false;
  static constexpr int kUnits = 8, kVecs = 2, kGroups = 8, kPerGroup = 1;
  static constexpr bool kUnrollGroups = true;
  static int unit(int g, int) { return g; }
  static int8x16_t scales(const uint8_t* b) {  // 6-bit scale - 32
    const uint8_t* sl = b + offsetof(BlockIQ4_XS, scales_l);
    const uint16_t sh = load_u16(b + offsetof(BlockIQ4_XS, scales_h));
    uint64_t v = 0;
    for (int ib = 0; ib < 8; ++ib) {
      v |= static_cast<uint64_t>(static_cast<uint8_t>(iq4_xs_scale(sl, sh, ib) - 32)) << (8 * ib);
    }
    return vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(v), vcreate_u64(0)));
  }
  static void mins(const uint8_t*, int16x8_t&, int16x8_t&) {}
  static constexpr int kMinTerms = 0;
  static void min_terms(const uint8_t*, int16x8_t[2]) {}
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const int8x16_t table = vld1q_s8(kIQ4NLValues);
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockIQ4_XS, qs) + 16 * g);
    w[0] = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
    w[1] = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
  }
};

}  // namespace
}  // namespace ox::kernels::neon_common
