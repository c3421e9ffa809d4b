// NEON dot products of the float formats (F32, F16, BF16). Reference:
// quant_traits(F32/F16/BF16).vec_dot_ref; products are exact for F16/BF16, only the summation
// order differs (4 lanes x 4 accumulators, fused multiply-add).
#include "kernels/neon/neon.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon {
namespace {

using neon_common::fp16;

inline float bf16_scalar(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// 8 half-precision values -> two f32x4 (fcvtl / fcvtl2: exact).
inline void load_f16x8(const uint16_t* p, float32x4_t* lo, float32x4_t* hi) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
  *lo = vcvt_f32_f16(vget_low_f16(h));
  *hi = vcvt_high_f32_f16(h);
}

// 8 bf16 values -> two f32x4 (shift into the top half of each f32).
inline void load_bf16x8(const uint16_t* p, float32x4_t* lo, float32x4_t* hi) {
  const uint16x8_t h = vld1q_u16(p);
  *lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
  *hi = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
}

template <typename Load8, typename Scalar>
inline float dot_half(int64_t n, const uint16_t* x, const uint16_t* y, Load8 load8, Scalar scalar) {
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float32x4_t x0, x1, x2, x3, y0, y1, y2, y3;
    load8(x + i, &x0, &x1);
    load8(x + i + 8, &x2, &x3);
    load8(y + i, &y0, &y1);
    load8(y + i + 8, &y2, &y3);
    acc0 = vfmaq_f32(acc0, x0, y0);
    acc1 = vfmaq_f32(acc1, x1, y1);
    acc2 = vfmaq_f32(acc2, x2, y2);
    acc3 = vfmaq_f32(acc3, x3, y3);
  }
  for (; i + 8 <= n; i += 8) {
    float32x4_t x0, x1, y0, y1;
    load8(x + i, &x0, &x1);
    load8(y + i, &y0, &y1);
    acc0 = vfmaq_f32(acc0, x0, y0);
    acc1 = vfmaq_f32(acc1, x1, y1);
  }
  float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc0, acc1), vaddq_f32(acc2, acc3)));
  for (; i < n; ++i) sum += scalar(x[i]) * scalar(y[i]);
  return sum;
}

}  // namespace

template <>
void vec_dot<DType::F32>(int64_t n, float* s, const void* vx, const void* vy) {
  const float* x = static_cast<const float*>(vx);
  const float* y = static_cast<const float*>(vy);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = vfmaq_f32(acc0, vld1q_f32(x + i), vld1q_f32(y + i));
    acc1 = vfmaq_f32(acc1, vld1q_f32(x + i + 4), vld1q_f32(y + i + 4));
    acc2 = vfmaq_f32(acc2, vld1q_f32(x + i + 8), vld1q_f32(y + i + 8));
    acc3 = vfmaq_f32(acc3, vld1q_f32(x + i + 12), vld1q_f32(y + i + 12));
  }
  for (; i + 4 <= n; i += 4) acc0 = vfmaq_f32(acc0, vld1q_f32(x + i), vld1q_f32(y + i));
  float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc0, acc1), vaddq_f32(acc2, acc3)));
  for (; i < n; ++i) sum += x[i] * y[i];
  *s = sum;
}

template <>
void vec_dot<DType::F16>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = dot_half(n, static_cast<const uint16_t*>(vx), static_cast<const uint16_t*>(vy), load_f16x8,
                [](uint16_t h) { return fp16(h); });
}

template <>
void vec_dot<DType::BF16>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = dot_half(n, static_cast<const uint16_t*>(vx), static_cast<const uint16_t*>(vy), load_bf16x8,
                [](uint16_t h) { return bf16_scalar(h); });
}

// 8 at a time through load8 (exact conversions), the rest one by one.
template <typename Load8, typename Scalar>
inline void half_to_float(const void* vx, float* y, int64_t n, Load8 load8, Scalar scalar) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t lo, hi;
    load8(x + i, &lo, &hi);
    vst1q_f32(y + i, lo);
    vst1q_f32(y + i + 4, hi);
  }
  for (; i < n; ++i) y[i] = scalar(x[i]);
}

void to_float_f16(const void* x, float* y, int64_t n) {
  half_to_float(x, y, n, load_f16x8, [](uint16_t h) { return fp16(h); });
}

void to_float_bf16(const void* x, float* y, int64_t n) {
  half_to_float(x, y, n, load_bf16x8, [](uint16_t h) { return bf16_scalar(h); });
}

}  // namespace ox::kernels::neon
