// SIMD128 to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL): what
// attention reads of a quantized V cache. Each block's 32 values become two byte vectors in element
// order, then y = d * v (+ m): an exact int -> float conversion, one rounded product and, for the
// formats with a minimum, one rounded sum, as the scalar reference computes them (wasm has no
// fused multiply-add), so the bits are the reference's.
#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// Elements 0..15 and 16..31 of a block as signed bytes.
struct Values {
  v128_t lo, hi;
};

// y[0, 16) = d * v[i] (+ m).
template <bool kMin>
inline void store16(v128_t v, v128_t d, v128_t m, float* y) {
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

// values(block, &d, &m) -> Values for each block of a row of n values.
template <bool kMin, typename Block, typename Fn>
inline void blocks_to_float(const void* vx, float* y, int64_t n, Fn values) {
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / 32; ++b) {
    float d = 0.0f, m = 0.0f;
    const Values v = values(x[b], &d, &m);
    store16<kMin>(v.lo, wasm_f32x4_splat(d), wasm_f32x4_splat(m), y + 32 * b);
    store16<kMin>(v.hi, wasm_f32x4_splat(d), wasm_f32x4_splat(m), y + 32 * b + 16);
  }
}

inline Values nibbles(const uint8_t* qs) {
  const v128_t q = wasm_v128_load(qs);
  return {wasm_v128_and(q, wasm_i8x16_splat(0x0F)), wasm_u8x16_shr(q, 4)};
}

// 0x10 in byte i of {lo: elements 0..15, hi: 16..31} where bit i of the block's qh is set.
inline Values fifth_bits(const uint8_t* qh) {
  const v128_t bit = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  auto plane = [&](uint8_t a, uint8_t b) {
    const v128_t spread = wasm_i64x2_make(static_cast<int64_t>(a * 0x0101010101010101ULL),
                                          static_cast<int64_t>(b * 0x0101010101010101ULL));
    return wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread, bit), bit), wasm_i8x16_splat(0x10));
  };
  return {plane(qh[0], qh[1]), plane(qh[2], qh[3])};
}

inline Values add(Values v, int8_t k) { return {wasm_i8x16_add(v.lo, wasm_i8x16_splat(k)), wasm_i8x16_add(v.hi, wasm_i8x16_splat(k))}; }
inline Values either(Values a, Values b) { return {wasm_v128_or(a.lo, b.lo), wasm_v128_or(a.hi, b.hi)}; }

void to_float_q8_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ8_0>(vx, y, n, [](const BlockQ8_0& b, float* d, float*) {
    *d = fp16(b.d);
    return Values{wasm_v128_load(b.qs), wasm_v128_load(b.qs + 16)};
  });
}

void to_float_q4_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ4_0>(vx, y, n, [](const BlockQ4_0& b, float* d, float*) {
    *d = fp16(b.d);
    return add(nibbles(b.qs), -8);
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
    return add(either(nibbles(b.qs), fifth_bits(b.qh)), -16);
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
  const v128_t table = wasm_v128_load(kIQ4NLValues);
  blocks_to_float<false, BlockIQ4_NL>(vx, y, n, [&](const BlockIQ4_NL& b, float* d, float*) {
    *d = fp16(b.d);
    const Values i = nibbles(b.qs);
    return Values{wasm_i8x16_swizzle(table, i.lo), wasm_i8x16_swizzle(table, i.hi)};
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

}  // namespace ox::kernels::simd128
