// NEON building blocks shared by the plain and the +dotprod kernel files. Everything has
// internal linkage (static / anonymous namespace): the two folders are compiled with different
// -march flags and must never share one COMDAT copy of a helper.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "core/quant/traits.h"

namespace ox::kernels::neon_common {
namespace {

inline float fp16(uint16_t h) {
  __fp16 f;
  std::memcpy(&f, &h, 2);
  return static_cast<float>(f);  // one fcvt, exact like ox::fp16_to_f32
}

// Unaligned little-endian u32 of a block field.
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// ox::quant::fp16_saturate restated with internal linkage (see kernels/x86/avx2/util.h).
inline uint16_t fp16_saturate(float f) { return f32_to_fp16(__builtin_fminf(65504.0f, __builtin_fmaxf(-65504.0f, f))); }

// i32x4 += sums of int8 products, 16 pairs, without SDOT: products of lanes i and i+8 are added
// in i16 (exact while one operand avoids -128, as activation quants do), then widened.
struct DotNeon {
  static inline int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
    const int16x8_t p = vmlal_high_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), a, b);
    return vpadalq_s16(acc, p);
  }
};

// K-quant scale layouts, as kernels/x86/avx2/util.h describes them.
struct KScales {
  uint8_t scales[8];  // read one at a time
  uint64_t mins;      // byte j = min j, kept in a register for the vector min dot
};
inline KScales unpack_k4_scales(const uint8_t* p) {
  uint32_t a[3];  // three scalar loads: a 12-byte memcpy into an array goes through the stack
  std::memcpy(&a[0], p, 4);
  std::memcpy(&a[1], p + 4, 4);
  std::memcpy(&a[2], p + 8, 4);
  const uint32_t sc[2] = {a[0] & 0x3f3f3f3fu, (a[2] & 0x0f0f0f0fu) | (((a[0] >> 6) & 0x03030303u) << 4)};
  const uint32_t mn0 = a[1] & 0x3f3f3f3fu, mn1 = ((a[2] >> 4) & 0x0f0f0f0fu) | (((a[1] >> 6) & 0x03030303u) << 4);
  KScales k;
  std::memcpy(k.scales, sc, 8);
  k.mins = mn0 | (static_cast<uint64_t>(mn1) << 32);
  return k;
}

// Q3_K's sixteen scales, bias removed (-32..31), lane j = scale j; built in registers (a u32
// array reloaded as a vector would stall store forwarding).
inline int8x16_t q3_k_scales(const uint8_t* p) {
  uint32_t a[3];  // three scalar loads: a 12-byte memcpy into an array goes through the stack
  std::memcpy(&a[0], p, 4);
  std::memcpy(&a[1], p + 4, 4);
  std::memcpy(&a[2], p + 8, 4);
  const uint64_t lo = ((a[0] & 0x0f0f0f0fu) | ((a[2] & 0x03030303u) << 4)) |
                      (static_cast<uint64_t>((a[1] & 0x0f0f0f0fu) | (((a[2] >> 2) & 0x03030303u) << 4)) << 32);
  const uint64_t hi = (((a[0] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 4) & 0x03030303u) << 4)) |
                      (static_cast<uint64_t>(((a[1] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 6) & 0x03030303u) << 4)) << 32);
  const uint8x16_t u = vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)));
  return vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(32));
}

inline int iq4_xs_scale(const uint8_t* scales_l, uint16_t scales_h, int ib) {
  return ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
}

// sum_k w_k * bsums_k over 16 sub-block sums (i16 weights), as one i32.
inline int32_t bsum_dot(const int16_t* bsums, int16x8_t w_lo, int16x8_t w_hi) {
  const int16x8_t b0 = vld1q_s16(bsums), b1 = vld1q_s16(bsums + 8);
  int32x4_t s = vmull_s16(vget_low_s16(b0), vget_low_s16(w_lo));
  s = vmlal_high_s16(s, b0, w_lo);
  s = vmlal_s16(s, vget_low_s16(b1), vget_low_s16(w_hi));
  s = vmlal_high_s16(s, b1, w_hi);
  return vaddvq_s32(s);
}

}  // namespace
}  // namespace ox::kernels::neon_common
