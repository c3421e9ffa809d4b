// SIMD128 dot products of Q2_K and Q3_K against Q8_K. Reference: quant_traits(Q2_K / Q3_K).vec_dot_ref.
// Byte l of 32-byte half h holds elements 128h + 32j + l at bits 2j..2j+1; elements
// 128h + 32j + 16t .. +15 form the 16-element sub-block 8h + 2j + t with one scale.
#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

inline EvenOdd shr_and(EvenOdd v, int shift, int16_t mask) {
  const v128_t m = wasm_i16x8_splat(mask);
  return {wasm_v128_and(wasm_u16x8_shr(v.even, shift), m), wasm_v128_and(wasm_u16x8_shr(v.odd, shift), m)};
}

}  // namespace

void vec_dot_q2_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // scales[k]: low nibble = scale of sub-block k, high nibble = its min.
    const v128_t packed = load(x[i].scales);
    int8_t scales[16];
    wasm_v128_store(scales, wasm_v128_and(packed, wasm_i8x16_splat(0x0F)));
    const v128_t mins = wasm_v128_and(wasm_u16x8_shr(packed, 4), wasm_i8x16_splat(0x0F));
    const v128_t min_dot =
        wasm_i32x4_add(wasm_i32x4_dot_i16x8(load(y[i].bsums), wasm_u16x8_extend_low_u8x16(mins)),
                       wasm_i32x4_dot_i16x8(load(y[i].bsums + 8), wasm_u16x8_extend_high_u8x16(mins)));
    const EvenOdd q[2][2] = {{split_u8(load(x[i].qs)), split_u8(load(x[i].qs + 16))},
                             {split_u8(load(x[i].qs + 32)), split_u8(load(x[i].qs + 48))}};
    const v128_t sumi = scaled_planes(y[i].qs, scales, [&](int h, int t, int j) { return shr_and(q[h][t], 2 * j, 3); });
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, min_dot, y[i].d * fp16(x[i].dmin));
  }
  *s = hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

void vec_dot_q3_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const v128_t sc8 = q3_k_scales(x[i].scales);  // -32..31
    int8_t scales[16];
    wasm_v128_store(scales, sc8);  // read back one byte at a time: forwarding works
    // q = u - 4 with u = low2 + 4 * hbit: start from -4 * sum_k sc_k * bsums_k.
    const v128_t bias = wasm_i32x4_add(wasm_i32x4_dot_i16x8(load(y[i].bsums), wasm_i16x8_extend_low_i8x16(sc8)),
                                       wasm_i32x4_dot_i16x8(load(y[i].bsums + 8), wasm_i16x8_extend_high_i8x16(sc8)));
    const v128_t hm[2] = {load(x[i].hmask), load(x[i].hmask + 16)};
    const v128_t m3 = wasm_i8x16_splat(3), m4 = wasm_i8x16_splat(4);
    // u = low2 | hbit << 2 built on whole bytes (hmask bit 4h + j of byte l is the high bit of
    // element 128h + 32j + l, moved to bit 2 by one 16-bit shift and a byte mask), then split.
    auto plane = [&](int h, int t, int j) {
      const v128_t q = load(x[i].qs + 32 * h + 16 * t);
      const int bit = 4 * h + j;
      const v128_t hb = bit >= 2 ? wasm_u16x8_shr(hm[t], bit - 2) : wasm_i16x8_shl(hm[t], 2 - bit);
      const v128_t u = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(q, 2 * j), m3), wasm_v128_and(hb, m4));
      return split_u8(u);
    };
    const v128_t sumi = wasm_i32x4_sub(scaled_planes(y[i].qs, scales, plane), wasm_i32x4_shl(bias, 2));
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
  }
  *s = hsum_f32(acc);
}

}  // namespace ox::kernels::simd128
