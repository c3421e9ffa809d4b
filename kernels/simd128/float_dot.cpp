// SIMD128 dot products of the float formats (F32, F16, BF16). Reference:
// quant_traits(F32/F16/BF16).vec_dot_ref; products are exact for F16/BF16, only the summation
// order differs. Half-precision values are handled as even / odd u16 of each u32 lane (the
// order of terms does not matter to a dot product), which saves the widening shuffles.
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

inline float f16_scalar_product(uint16_t a, uint16_t b) { return fp16(a) * fp16(b); }

inline float bf16_scalar(uint16_t h) { return bits_to_f32(static_cast<uint32_t>(h) << 16); }

}  // namespace

// Fp16Fast's constants (util.h), read from linear memory for the reason loop_constants is
// (gemm_tile.cpp): not const, so that neither LLVM nor V8 rebuilds them inside a loop.
extern v128_t fp16_fast_constants[4];
v128_t fp16_fast_constants[4] = {
    wasm_i32x4_const(static_cast<int32_t>(kFp16SignExpMantissa), static_cast<int32_t>(kFp16SignExpMantissa),
                     static_cast<int32_t>(kFp16SignExpMantissa), static_cast<int32_t>(kFp16SignExpMantissa)),
    wasm_f32x4_const(kFp16Scale, kFp16Scale, kFp16Scale, kFp16Scale),
    wasm_i16x8_const(0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00),
    wasm_i32x4_const(0, 0, 0, 0),
};

Fp16Fast fp16_fast_consts() {
  const v128_t* k = fp16_fast_constants;
  return {k[0], k[1], k[2], k[3]};
}

template <>
void vec_dot<DType::F32>(int64_t n, float* s, const void* vx, const void* vy) {
  const float* x = static_cast<const float*>(vx);
  const float* y = static_cast<const float*>(vy);
  v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(load(x + i), load(y + i)));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(load(x + i + 4), load(y + i + 4)));
    acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(load(x + i + 8), load(y + i + 8)));
    acc3 = wasm_f32x4_add(acc3, wasm_f32x4_mul(load(x + i + 12), load(y + i + 12)));
  }
  for (; i + 4 <= n; i += 4) acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(load(x + i), load(y + i)));
  float sum = hsum_f32(wasm_f32x4_add(wasm_f32x4_add(acc0, acc1), wasm_f32x4_add(acc2, acc3)));
  for (; i < n; ++i) sum += x[i] * y[i];
  *s = sum;
}

template <>
void vec_dot<DType::F16>(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  const v128_t low = wasm_i32x4_splat(0xFFFF);
  const Fp16Fast c = fp16_fast_consts();
  v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t xv = load(x + i), yv = load(y + i);
    v128_t xe, ye, xo, yo;
    if (c.any_special(xv, yv)) {  // an Inf or NaN: the long conversion
      xe = fp16x4_to_f32(wasm_v128_and(xv, low)), ye = fp16x4_to_f32(wasm_v128_and(yv, low));
      xo = fp16x4_to_f32(wasm_u32x4_shr(xv, 16)), yo = fp16x4_to_f32(wasm_u32x4_shr(yv, 16));
    } else {
      xe = c.even(xv), ye = c.even(yv);
      xo = c.odd(xv), yo = c.odd(yv);
    }
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(xe, ye));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(xo, yo));
  }
  float sum = hsum_f32(wasm_f32x4_add(acc0, acc1));
  for (; i < n; ++i) sum += f16_scalar_product(x[i], y[i]);
  *s = sum;
}

template <>
void vec_dot<DType::BF16>(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  // bf16 = top half of an f32: even elements shift up, odd elements are already in place.
  const v128_t high = wasm_i32x4_splat(static_cast<int32_t>(0xFFFF0000u));
  v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t x0 = load(x + i), y0 = load(y + i), x1 = load(x + i + 8), y1 = load(y + i + 8);
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(wasm_i32x4_shl(x0, 16), wasm_i32x4_shl(y0, 16)));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(wasm_v128_and(x0, high), wasm_v128_and(y0, high)));
    acc2 = wasm_f32x4_add(acc2, wasm_f32x4_mul(wasm_i32x4_shl(x1, 16), wasm_i32x4_shl(y1, 16)));
    acc3 = wasm_f32x4_add(acc3, wasm_f32x4_mul(wasm_v128_and(x1, high), wasm_v128_and(y1, high)));
  }
  for (; i + 8 <= n; i += 8) {
    const v128_t x0 = load(x + i), y0 = load(y + i);
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(wasm_i32x4_shl(x0, 16), wasm_i32x4_shl(y0, 16)));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(wasm_v128_and(x0, high), wasm_v128_and(y0, high)));
  }
  float sum = hsum_f32(wasm_f32x4_add(wasm_f32x4_add(acc0, acc1), wasm_f32x4_add(acc2, acc3)));
  for (; i < n; ++i) sum += bf16_scalar(x[i]) * bf16_scalar(y[i]);
  *s = sum;
}

void to_float_f16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const Fp16Fast c = fp16_fast_consts();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = load(x + i);
    if (c.any_special(h)) {
      wasm_v128_store(y + i, fp16x4_to_f32(wasm_u32x4_extend_low_u16x8(h)));
      wasm_v128_store(y + i + 4, fp16x4_to_f32(wasm_u32x4_extend_high_u16x8(h)));
    } else {
      wasm_v128_store(y + i, c.low4(h));
      wasm_v128_store(y + i + 4, c.high4(h));
    }
  }
  for (; i < n; ++i) y[i] = fp16(x[i]);
}

void to_float_bf16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t h = load(x + i);
    wasm_v128_store(y + i, wasm_i32x4_shl(wasm_u32x4_extend_low_u16x8(h), 16));
    wasm_v128_store(y + i + 4, wasm_i32x4_shl(wasm_u32x4_extend_high_u16x8(h), 16));
  }
  for (; i < n; ++i) y[i] = bf16_scalar(x[i]);
}

}  // namespace ox::kernels::simd128
