// SIMD128 primitives of to_float for the quantized KV cache types (kernels/kv_to_float_impl.h): a
// block's 32 values as two byte vectors, widened to i32 and converted four at a time.
#include "kernels/kv_to_float_impl.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

struct Simd128 {
  struct Values {
    v128_t lo, hi;  // elements 0..15, 16..31
  };
  static float fp16(uint16_t h) { return simd128::fp16(h); }
  static Values bytes(const int8_t* qs) { return {wasm_v128_load(qs), wasm_v128_load(qs + 16)}; }
  static Values nibbles(const uint8_t* qs) {
    const v128_t q = wasm_v128_load(qs);
    return {wasm_v128_and(q, wasm_i8x16_splat(0x0F)), wasm_u8x16_shr(q, 4)};
  }
  static Values fifth_bits(const uint8_t* qh) {
    const v128_t bit = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    auto plane = [&](uint8_t a, uint8_t b) {
      const v128_t spread = wasm_i64x2_make(static_cast<int64_t>(a * 0x0101010101010101ULL),
                                            static_cast<int64_t>(b * 0x0101010101010101ULL));
      return wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread, bit), bit), wasm_i8x16_splat(0x10));
    };
    return {plane(qh[0], qh[1]), plane(qh[2], qh[3])};
  }
  static Values add(Values v, int8_t k) {
    return {wasm_i8x16_add(v.lo, wasm_i8x16_splat(k)), wasm_i8x16_add(v.hi, wasm_i8x16_splat(k))};
  }
  static Values either(Values a, Values b) { return {wasm_v128_or(a.lo, b.lo), wasm_v128_or(a.hi, b.hi)}; }
  static Values lookup(Values i) {
    const v128_t table = wasm_v128_load(kIQ4NLValues);
    return {wasm_i8x16_swizzle(table, i.lo), wasm_i8x16_swizzle(table, i.hi)};
  }
  template <bool kMin>
  static void store16(v128_t v, v128_t d, v128_t m, float* y) {
    const v128_t w[2] = {wasm_i16x8_extend_low_i8x16(v), wasm_i16x8_extend_high_i8x16(v)};
    for (int h = 0; h < 2; ++h) {
      const v128_t q[2] = {wasm_i32x4_extend_low_i16x8(w[h]), wasm_i32x4_extend_high_i16x8(w[h])};
      for (int k = 0; k < 2; ++k) {
        v128_t f = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(q[k]));
        if constexpr (kMin) f = wasm_f32x4_add(f, m);
        wasm_v128_store(y + 8 * h + 4 * k, f);
      }
    }
  }
  template <bool kMin>
  static void store(Values v, float d, float m, float* y) {
    store16<kMin>(v.lo, wasm_f32x4_splat(d), wasm_f32x4_splat(m), y);
    store16<kMin>(v.hi, wasm_f32x4_splat(d), wasm_f32x4_splat(m), y + 16);
  }
};

}  // namespace

void patch_kv_to_float(KernelTable& t) { kv_to_float::install<Simd128>(t); }

}  // namespace ox::kernels::simd128
