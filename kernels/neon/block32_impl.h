// Bodies of the NEON dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, IQ4_NL, MXFP4) against Q8_0 / Q8_1, templated on the int8 dot primitive: neon/block32_dot.cpp
// instantiates them with DotNeon, neon/dotprod/block32_dot.cpp with SDOT.
// Reference: quant_traits(W).vec_dot_ref; integer block sums exact, float order differs.
#pragma once

#include "core/quant/blocks.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon_common {
namespace {

template <typename Block>
inline float sum_blocks(int64_t nb, Block block) {
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    acc0 = block(i, acc0);
    acc1 = block(i + 1, acc1);
  }
  if (i < nb) acc0 = block(i, acc0);
  return vaddvq_f32(vaddq_f32(acc0, acc1));
}

// Both halves of a block (elements 0..15 and 16..31) against the activation quants.
template <typename Dot>
inline int32x4_t block_dot(int8x16_t lo, int8x16_t hi, const int8_t* a) {
  return Dot::dot(Dot::dot(vdupq_n_s32(0), lo, vld1q_s8(a)), hi, vld1q_s8(a + 16));
}

inline float32x4_t scaled(float32x4_t acc, int32x4_t isum, float d) { return vfmaq_n_f32(acc, vcvtq_f32_s32(isum), d); }

// 0x10 in byte e (e = 0..15 for `first` = 0, 16..31 for 16) where bit e of qh is set.
inline uint8x16_t q5_high_bits(uint32_t qh, int first) {
  static const uint8_t kIndex[2][16] = {{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
                                        {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}};
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bytes = vqtbl1q_u8(vreinterpretq_u8_u32(vdupq_n_u32(qh)), vld1q_u8(kIndex[first / 16]));
  return vandq_u8(vtstq_u8(bytes, vld1q_u8(kBit)), vdupq_n_u8(0x10));
}

// sum_i m_i * s_i of Q4_1 / Q5_1 against Q8_1 (x = d*q + m; s = dy * sum(a) is stored); four
// partial sums so the adds do not form one serial chain.
template <typename Block>
inline float sum_min_terms(int64_t nb, const Block* x, const BlockQ8_1* y) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    s0 += fp16(x[i].m) * fp16(y[i].s);
    s1 += fp16(x[i + 1].m) * fp16(y[i + 1].s);
    s2 += fp16(x[i + 2].m) * fp16(y[i + 2].s);
    s3 += fp16(x[i + 3].m) * fp16(y[i + 3].s);
  }
  for (; i < nb; ++i) s0 += fp16(x[i].m) * fp16(y[i].s);
  return (s0 + s1) + (s2 + s3);
}

template <typename Dot>
void q4_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  const int8x16_t eight = vdupq_n_s8(8);
  *s = sum_blocks(n / kQK4_0, [&](int64_t i, float32x4_t acc) {
    const uint8x16_t q = vld1q_u8(x[i].qs);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
    return scaled(acc, block_dot<Dot>(lo, hi, y[i].qs), fp16(x[i].d) * fp16(y[i].d));
  });
}

template <typename Dot>
void q4_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK4_1;
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  *s = sum_min_terms(nb, x, y) + sum_blocks(nb, [&](int64_t i, float32x4_t acc) {
         const uint8x16_t q = vld1q_u8(x[i].qs);
         const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(q, m4));
         const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
         return scaled(acc, block_dot<Dot>(lo, hi, y[i].qs), fp16(x[i].d) * fp16(y[i].d));
       });
}

template <typename Dot>
void q5_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  const int8x16_t sixteen = vdupq_n_s8(16);
  *s = sum_blocks(n / kQK5_0, [&](int64_t i, float32x4_t acc) {
    const uint32_t qh = load_u32(x[i].qh);
    const uint8x16_t q = vld1q_u8(x[i].qs);
    const uint8x16_t lo = vorrq_u8(vandq_u8(q, m4), q5_high_bits(qh, 0));
    const uint8x16_t hi = vorrq_u8(vshrq_n_u8(q, 4), q5_high_bits(qh, 16));
    const int8x16_t wl = vsubq_s8(vreinterpretq_s8_u8(lo), sixteen), wh = vsubq_s8(vreinterpretq_s8_u8(hi), sixteen);
    return scaled(acc, block_dot<Dot>(wl, wh, y[i].qs), fp16(x[i].d) * fp16(y[i].d));
  });
}

template <typename Dot>
void q5_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK5_1;
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  *s = sum_min_terms(nb, x, y) + sum_blocks(nb, [&](int64_t i, float32x4_t acc) {
         const uint32_t qh = load_u32(x[i].qh);
         const uint8x16_t q = vld1q_u8(x[i].qs);
         const uint8x16_t lo = vorrq_u8(vandq_u8(q, m4), q5_high_bits(qh, 0));
         const uint8x16_t hi = vorrq_u8(vshrq_n_u8(q, 4), q5_high_bits(qh, 16));
         return scaled(acc, block_dot<Dot>(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), y[i].qs),
                       fp16(x[i].d) * fp16(y[i].d));
       });
}

template <typename Dot>
void q8_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = sum_blocks(n / kQK8_0, [&](int64_t i, float32x4_t acc) {
    return scaled(acc, block_dot<Dot>(vld1q_s8(x[i].qs), vld1q_s8(x[i].qs + 16), y[i].qs), fp16(x[i].d) * fp16(y[i].d));
  });
}

// The formats whose nibbles index a 16-entry codebook of signed bytes (IQ4_NL, MXFP4) against
// Q8_0; `weight_scale(block)` is the block's float scale.
template <typename Dot, typename Block, typename Scale>
inline float codebook_q8_0(int64_t n, const Block* x, const BlockQ8_0* y, const int8_t* values, Scale weight_scale) {
  const int8x16_t table = vld1q_s8(values);
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  return sum_blocks(n / kQK8_0, [&](int64_t i, float32x4_t acc) {
    const uint8x16_t q = vld1q_u8(x[i].qs);
    const int8x16_t lo = vqtbl1q_s8(table, vandq_u8(q, m4));
    const int8x16_t hi = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
    return scaled(acc, block_dot<Dot>(lo, hi, y[i].qs), weight_scale(x[i]) * fp16(y[i].d));
  });
}

template <typename Dot>
void iq4_nl_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_q8_0<Dot>(n, static_cast<const BlockIQ4_NL*>(vx), static_cast<const BlockQ8_0*>(vy), kIQ4NLValues,
                          [](const BlockIQ4_NL& b) { return fp16(b.d); });
}

template <typename Dot>
void mxfp4_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_q8_0<Dot>(n, static_cast<const BlockMXFP4*>(vx), static_cast<const BlockQ8_0*>(vy), kMXFP4Values,
                          [](const BlockMXFP4& b) { return mxfp4_scale(b.e); });
}

}  // namespace
}  // namespace ox::kernels::neon_common
