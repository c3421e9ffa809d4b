// NEON to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL): what
// attention reads of a quantized V cache. Each block's 32 values become two byte vectors in element
// order, then y = d * v (+ m): an exact int -> float conversion, one rounded product and, for the
// formats with a minimum, one rounded sum, as the scalar reference computes them (no fused
// multiply-add: -ffp-contract=off there), so the bits are the reference's.
#include "core/quant/blocks.h"
#include "kernels/neon/neon.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon {
namespace {

using neon_common::fp16;

// Elements 0..15 and 16..31 of a block as signed bytes.
struct Values {
  int8x16_t lo, hi;
};

// y[0, 16) = d * v[i] (+ m).
template <bool kMin>
inline void store16(int8x16_t v, float32x4_t d, float32x4_t m, float* y) {
  const int16x8_t w[2] = {vmovl_s8(vget_low_s8(v)), vmovl_high_s8(v)};
  for (int h = 0; h < 2; ++h) {
    const int32x4_t q[2] = {vmovl_s16(vget_low_s16(w[h])), vmovl_high_s16(w[h])};
    for (int k = 0; k < 2; ++k) {
      float32x4_t f = vmulq_f32(d, vcvtq_f32_s32(q[k]));
      if constexpr (kMin) f = vaddq_f32(f, m);
      vst1q_f32(y + 8 * h + 4 * k, f);
    }
  }
}

// values(block, &d, &m) -> Values for each block of a row of n values.
template <bool kMin, typename Block, typename Fn>
inline void blocks_to_float(const void* vx, float* y, int64_t n, Fn values) {
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / 32; ++b) {
    float d = 0.0f, m = 0.0f;
    const Values v = values(x[b], &d, &m);
    store16<kMin>(v.lo, vdupq_n_f32(d), vdupq_n_f32(m), y + 32 * b);
    store16<kMin>(v.hi, vdupq_n_f32(d), vdupq_n_f32(m), y + 32 * b + 16);
  }
}

inline Values nibbles(const uint8_t* qs) {
  const uint8x16_t q = vld1q_u8(qs);
  return {vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), vreinterpretq_s8_u8(vshrq_n_u8(q, 4))};
}

// 0x10 in byte i of {lo: elements 0..15, hi: 16..31} where bit i of the block's qh is set.
inline Values fifth_bits(const uint8_t* qh) {
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bit = vld1q_u8(kBit);
  const uint8x16_t lo = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
  const uint8x16_t hi = vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3]));
  const uint8x16_t ten = vdupq_n_u8(0x10);
  return {vreinterpretq_s8_u8(vandq_u8(vtstq_u8(lo, bit), ten)), vreinterpretq_s8_u8(vandq_u8(vtstq_u8(hi, bit), ten))};
}

inline Values add(Values v, int8x16_t k) { return {vaddq_s8(v.lo, k), vaddq_s8(v.hi, k)}; }
inline Values either(Values a, Values b) { return {vorrq_s8(a.lo, b.lo), vorrq_s8(a.hi, b.hi)}; }

void to_float_q8_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ8_0>(vx, y, n, [](const BlockQ8_0& b, float* d, float*) {
    *d = fp16(b.d);
    return Values{vld1q_s8(b.qs), vld1q_s8(b.qs + 16)};
  });
}

void to_float_q4_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ4_0>(vx, y, n, [](const BlockQ4_0& b, float* d, float*) {
    *d = fp16(b.d);
    return add(nibbles(b.qs), vdupq_n_s8(-8));
  });
}

void to_float_q4_1(const void* vx, float* y, int64_t n) {
  blocks_to_float<true, BlockQ4_1>(vx, y, n, [](const BlockQ4_1& b, float* d, float* m) {
    *d = fp16(b.d);
    *m = fp16(b.m);
    return nibbles(b.qs);
  });
}

void to_float_q5_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ5_0>(vx, y, n, [](const BlockQ5_0& b, float* d, float*) {
    *d = fp16(b.d);
    return add(either(nibbles(b.qs), fifth_bits(b.qh)), vdupq_n_s8(-16));
  });
}

void to_float_q5_1(const void* vx, float* y, int64_t n) {
  blocks_to_float<true, BlockQ5_1>(vx, y, n, [](const BlockQ5_1& b, float* d, float* m) {
    *d = fp16(b.d);
    *m = fp16(b.m);
    return either(nibbles(b.qs), fifth_bits(b.qh));
  });
}

void to_float_iq4_nl(const void* vx, float* y, int64_t n) {
  const int8x16_t table = vld1q_s8(kIQ4NLValues);
  blocks_to_float<false, BlockIQ4_NL>(vx, y, n, [&](const BlockIQ4_NL& b, float* d, float*) {
    *d = fp16(b.d);
    const Values i = nibbles(b.qs);
    return Values{vqtbl1q_s8(table, vreinterpretq_u8_s8(i.lo)), vqtbl1q_s8(table, vreinterpretq_u8_s8(i.hi))};
  });
}

}  // namespace

void patch_kv_to_float(KernelTable& t) {
  auto set = [&](DType type, ToFloatFn fn) { t.to_float[static_cast<uint32_t>(type)] = fn; };
  set(DType::Q8_0, to_float_q8_0);
  set(DType::Q4_0, to_float_q4_0);
  set(DType::Q4_1, to_float_q4_1);
  set(DType::Q5_0, to_float_q5_0);
  set(DType::Q5_1, to_float_q5_1);
  set(DType::IQ4_NL, to_float_iq4_nl);
}

}  // namespace ox::kernels::neon
