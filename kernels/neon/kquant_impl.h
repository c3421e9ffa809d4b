// Bodies of the NEON dot products of the K-quants and IQ4_XS against Q8_K, templated on the
// int8 dot primitive (DotNeon here, SDOT in neon/dotprod/). Reference:
// quant_traits(Q2_K..Q6_K / IQ4_XS).vec_dot_ref; integer parts exact, float order differs.
#pragma once

#include "core/quant/blocks.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon_common {
namespace {

inline float32x4_t scaled_k(float32x4_t acc, int32x4_t isum, float d) {
  return vfmaq_n_f32(acc, vcvtq_f32_s32(isum), d);
}

// Q2_K / Q3_K / Q6_K share one walk: elements 128h + 32j + 16t + (0..15) are sub-block
// 8h + 2j + t; `plane(h, t, j)` returns that sub-block's 16 signed weights.
template <typename Dot, typename Plane>
inline int32x4_t scaled_planes(const int8_t* a, const int8_t scales[16], Plane plane) {
  int32x4_t sumi = vdupq_n_s32(0);
  for (int h = 0; h < 2; ++h) {
    for (int t = 0; t < 2; ++t) {
      int8x16_t w[4];
      plane(h, t, w);
      for (int j = 0; j < 4; ++j) {
        const int32x4_t d = Dot::dot(vdupq_n_s32(0), w[j], vld1q_s8(a + 128 * h + 32 * j + 16 * t));
        sumi = vmlaq_n_s32(sumi, d, scales[8 * h + 2 * j + t]);
      }
    }
  }
  return sumi;
}

template <typename Dot>
void q2_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const uint8x16_t m2 = vdupq_n_u8(3), m4 = vdupq_n_u8(0x0F);
  float32x4_t acc = vdupq_n_f32(0.0f);
  float sum_min = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const uint8x16_t packed = vld1q_u8(x[i].scales);  // low nibble scale, high nibble min
    int8_t scales[16];
    vst1q_s8(scales, vreinterpretq_s8_u8(vandq_u8(packed, m4)));
    const uint8x16_t mins = vshrq_n_u8(packed, 4);
    const int32_t min_dot = bsum_dot(y[i].bsums, vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins))),
                                     vreinterpretq_s16_u16(vmovl_high_u8(mins)));
    auto plane = [&](int h, int t, int8x16_t w[4]) {
      const uint8x16_t q = vld1q_u8(x[i].qs + 32 * h + 16 * t);
      w[0] = vreinterpretq_s8_u8(vandq_u8(q, m2));
      w[1] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(q, 2), m2));
      w[2] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(q, 4), m2));
      w[3] = vreinterpretq_s8_u8(vshrq_n_u8(q, 6));
    };
    acc = scaled_k(acc, scaled_planes<Dot>(y[i].qs, scales, plane), y[i].d * fp16(x[i].d));
    sum_min += y[i].d * fp16(x[i].dmin) * static_cast<float>(min_dot);
  }
  *s = vaddvq_f32(acc) - sum_min;
}

template <typename Dot>
void q3_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const uint8x16_t m2 = vdupq_n_u8(3), four = vdupq_n_u8(4);
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t scales[16];  // -32..31, read back one at a time (store forwarding works for that)
    vst1q_s8(scales, q3_k_scales(x[i].scales));
    const uint8x16_t hm[2] = {vld1q_u8(x[i].hmask), vld1q_u8(x[i].hmask + 16)};
    // q = low2 - 4 where the hmask bit (4h + j of byte l) is clear.
    auto plane = [&](int h, int t, int8x16_t w[4]) {
      const uint8x16_t q = vld1q_u8(x[i].qs + 32 * h + 16 * t);
      const uint8x16_t low[4] = {vandq_u8(q, m2), vandq_u8(vshrq_n_u8(q, 2), m2), vandq_u8(vshrq_n_u8(q, 4), m2),
                                 vshrq_n_u8(q, 6)};
      for (int j = 0; j < 4; ++j) {
        const uint8x16_t set = vtstq_u8(hm[t], vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + j))));
        w[j] = vsubq_s8(vreinterpretq_s8_u8(low[j]), vreinterpretq_s8_u8(vbicq_u8(four, set)));
      }
    };
    acc = scaled_k(acc, scaled_planes<Dot>(y[i].qs, scales, plane), y[i].d * fp16(x[i].d));
  }
  *s = vaddvq_f32(acc);
}

// Q4_K / Q5_K: chunk c = 32 qs bytes, low nibbles = sub-block 2c (elements 64c..64c+31),
// high nibbles = sub-block 2c+1. `high(c, t, lo, hi)` adds Q5_K's 5th bits.
template <typename Dot, typename High>
inline int32x4_t k4_superblock(const uint8_t* qs, const int8_t* a, const uint8_t scales[8], High high) {
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  int32x4_t sumi = vdupq_n_s32(0);
  for (int c = 0; c < 4; ++c) {
    int32x4_t s_lo = vdupq_n_s32(0), s_hi = vdupq_n_s32(0);
    for (int t = 0; t < 2; ++t) {
      const uint8x16_t q = vld1q_u8(qs + 32 * c + 16 * t);
      uint8x16_t lo = vandq_u8(q, m4), hi = vshrq_n_u8(q, 4);
      high(c, t, lo, hi);
      s_lo = Dot::dot(s_lo, vreinterpretq_s8_u8(lo), vld1q_s8(a + 64 * c + 16 * t));
      s_hi = Dot::dot(s_hi, vreinterpretq_s8_u8(hi), vld1q_s8(a + 64 * c + 32 + 16 * t));
    }
    sumi = vmlaq_n_s32(sumi, s_lo, scales[2 * c]);
    sumi = vmlaq_n_s32(sumi, s_hi, scales[2 * c + 1]);
  }
  return sumi;
}

// sum_j m_j * (bsums[2j] + bsums[2j+1]).
inline int32_t k4_min_dot(uint64_t mins, const int16_t* bsums) {
  const int16x8_t pairs = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));
  const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vcreate_u8(mins)));
  return vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(pairs), vget_low_s16(m)), pairs, m));
}

template <typename Dot>
void q4_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float32x4_t acc = vdupq_n_f32(0.0f);
  float sum_min = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const KScales k = unpack_k4_scales(x[i].scales);
    const int32x4_t sumi = k4_superblock<Dot>(x[i].qs, y[i].qs, k.scales, [](int, int, uint8x16_t&, uint8x16_t&) {});
    acc = scaled_k(acc, sumi, y[i].d * fp16(x[i].d));
    sum_min += y[i].d * fp16(x[i].dmin) * static_cast<float>(k4_min_dot(k.mins, y[i].bsums));
  }
  *s = vaddvq_f32(acc) - sum_min;
}

template <typename Dot>
void q5_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_K* x = static_cast<const BlockQ5_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const uint8x16_t bit4 = vdupq_n_u8(0x10);
  float32x4_t acc = vdupq_n_f32(0.0f);
  float sum_min = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const KScales k = unpack_k4_scales(x[i].scales);
    // qh byte l: bit 2c = 5th bit of element 64c + l, bit 2c+1 of 64c + 32 + l; shifted down
    // by 2 after each chunk so bits 0 and 1 always belong to the current one.
    uint8x16_t qh[2] = {vld1q_u8(x[i].qh), vld1q_u8(x[i].qh + 16)};
    auto high = [&](int, int t, uint8x16_t& lo, uint8x16_t& hi) {
      lo = vorrq_u8(lo, vandq_u8(vshlq_n_u8(qh[t], 4), bit4));
      hi = vorrq_u8(hi, vandq_u8(vshlq_n_u8(qh[t], 3), bit4));
      qh[t] = vshrq_n_u8(qh[t], 2);
    };
    const int32x4_t sumi = k4_superblock<Dot>(x[i].qs, y[i].qs, k.scales, high);
    acc = scaled_k(acc, sumi, y[i].d * fp16(x[i].d));
    sum_min += y[i].d * fp16(x[i].dmin) * static_cast<float>(k4_min_dot(k.mins, y[i].bsums));
  }
  *s = vaddvq_f32(acc) - sum_min;
}

template <typename Dot>
void q6_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const uint8x16_t m2 = vdupq_n_u8(3);
  const int8x16_t bias = vdupq_n_s8(32);
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // Half h, bytes l = 16t..16t+15: ql[64h + l] low / high nibble = elements +0 / +64,
    // ql[64h + 32 + l] = +32 / +96; qh[32h + l] bits 0-1 / 2-3 / 4-5 / 6-7 are their top bits
    // (vsli inserts them above the nibble).
    auto plane = [&](int h, int t, int8x16_t w[4]) {
      const uint8x16_t l0 = vld1q_u8(x[i].ql + 64 * h + 16 * t), l1 = vld1q_u8(x[i].ql + 64 * h + 32 + 16 * t);
      const uint8x16_t qh = vld1q_u8(x[i].qh + 32 * h + 16 * t);
      const uint8x16_t q[4] = {vsliq_n_u8(l0, vandq_u8(qh, m2), 4), vsliq_n_u8(l1, vandq_u8(vshrq_n_u8(qh, 2), m2), 4),
                               vsliq_n_u8(vshrq_n_u8(l0, 4), vandq_u8(vshrq_n_u8(qh, 4), m2), 4),
                               vsliq_n_u8(vshrq_n_u8(l1, 4), vshrq_n_u8(qh, 6), 4)};
      for (int j = 0; j < 4; ++j) w[j] = vsubq_s8(vreinterpretq_s8_u8(q[j]), bias);
    };
    acc = scaled_k(acc, scaled_planes<Dot>(y[i].qs, x[i].scales, plane), y[i].d * fp16(x[i].d));
  }
  *s = vaddvq_f32(acc);
}

template <typename Dot>
void iq4_xs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int8x16_t table = vld1q_s8(kIQ4NLValues);
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int32x4_t sumi = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ++ib) {  // sub-block of 32: low nibbles elements 0..15, high 16..31
      const uint8x16_t q = vld1q_u8(x[i].qs + 16 * ib);
      const int8_t* a = y[i].qs + 32 * ib;
      int32x4_t d = Dot::dot(vdupq_n_s32(0), vqtbl1q_s8(table, vandq_u8(q, m4)), vld1q_s8(a));
      d = Dot::dot(d, vqtbl1q_s8(table, vshrq_n_u8(q, 4)), vld1q_s8(a + 16));
      sumi = vmlaq_n_s32(sumi, d, iq4_xs_scale(x[i].scales_l, x[i].scales_h, ib) - 32);
    }
    acc = scaled_k(acc, sumi, y[i].d * fp16(x[i].d));
  }
  *s = vaddvq_f32(acc);
}

}  // namespace
}  // namespace ox::kernels::neon_common
