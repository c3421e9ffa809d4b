// NEON primitives of to_float for the quantized KV cache types (kernels/kv_to_float_impl.h): a
// block's 32 values as two byte vectors, widened to i32 and converted four at a time.
#include "kernels/kv_to_float_impl.h"
#include "kernels/neon/neon.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon {
namespace {

struct Neon {
  struct Values {
    int8x16_t lo, hi;  // elements 0..15, 16..31
  };
  static float fp16(uint16_t h) { return neon_common::fp16(h); }
  static Values bytes(const int8_t* qs) { return {vld1q_s8(qs), vld1q_s8(qs + 16)}; }
  static Values nibbles(const uint8_t* qs) {
    const uint8x16_t q = vld1q_u8(qs);
    return {vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), vreinterpretq_s8_u8(vshrq_n_u8(q, 4))};
  }
  static Values fifth_bits(const uint8_t* qh) {
    static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t bit = vld1q_u8(kBit), ten = vdupq_n_u8(0x10);
    auto plane = [&](uint8_t a, uint8_t b) {
      return vreinterpretq_s8_u8(vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(a), vdup_n_u8(b)), bit), ten));
    };
    return {plane(qh[0], qh[1]), plane(qh[2], qh[3])};
  }
  static Values add(Values v, int8_t k) { return {vaddq_s8(v.lo, vdupq_n_s8(k)), vaddq_s8(v.hi, vdupq_n_s8(k))}; }
  static Values either(Values a, Values b) { return {vorrq_s8(a.lo, b.lo), vorrq_s8(a.hi, b.hi)}; }
  static Values lookup(Values i) {
    const int8x16_t table = vld1q_s8(kIQ4NLValues);
    return {vqtbl1q_s8(table, vreinterpretq_u8_s8(i.lo)), vqtbl1q_s8(table, vreinterpretq_u8_s8(i.hi))};
  }
  template <bool kMin>
  static void store16(int8x16_t v, float32x4_t d, float32x4_t m, float* y) {
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
  template <bool kMin>
  static void store(Values v, float d, float m, float* y) {
    store16<kMin>(v.lo, vdupq_n_f32(d), vdupq_n_f32(m), y);
    store16<kMin>(v.hi, vdupq_n_f32(d), vdupq_n_f32(m), y + 16);
  }
};

}  // namespace

void patch_kv_to_float(KernelTable& t) { kv_to_float::install<Neon>(t); }

}  // namespace ox::kernels::neon
