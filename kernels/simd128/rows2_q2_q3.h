// Two Q2_K or Q3_K rows against one token's activations (the gemm decode path): the SIMD128
// bodies of the q2_k_pairs / q3_k_pairs slots (relaxed_slots.h), whose relaxed bodies
// (relaxed/q2_k_pairs.wat, q3_k_pairs.wat) give the same bits. Every integer sum is exact, so only
// the float steps fix the bits: per super-block the rows' integer totals, converted, times the fp16
// scales times y.d, added in block order. Reference: quant_traits(Q2_K / Q3_K).vec_dot_ref.
#pragma once

#include <cstddef>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128::kquant {

// Byte l of qs[32h + 16t ..] holds elements 128h + 32j + 16t + l (sub-block k = 8h + 2j + t) at
// bits 2j..2j+1; act is y split by gemm::split_acts_q8_k (sub-block k's even / odd halves at
// act[32i + 2k], act[32i + 2k + 1]). A sub-block's 16 products (at most 3 * 128 each, Q3_K's 7 * 128)
// pair up in i16 and meet the sub-block scale in one i32x4.dot_i16x8_s against it splat.
//
// Q2_K: scales[k] = scale (low nibble) and min (high nibble) of sub-block k. Per block
// [row 0 sum, row 0 min term, row 1 sum, row 1 min term] as exact integers, times
// [d0, dmin0, d1, dmin1] * y.d (d and dmin adjacent, as Q4_K's); out = sum lane - min lane.
inline void rows2_q2_k(int64_t nb, const BlockQ2_K* x0, const BlockQ2_K* x1, const BlockQ8_K* y, const v128_t* act,
                       const Consts& consts, const Fp16Consts& half, float* out0, float* out1) {
  static_assert(offsetof(BlockQ2_K, dmin) == offsetof(BlockQ2_K, d) + 2, "d and dmin read as one u32");
  const v128_t m3 = wasm_i16x8_splat(3);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const v128_t p0 = load(x0[i].scales), p1 = load(x1[i].scales);
    const v128_t sc0 = wasm_v128_and(p0, consts.nibble8), sc1 = wasm_v128_and(p1, consts.nibble8);
    int16_t scales[32];  // row 0's then row 1's, as i16 so that each splat is one load
    wasm_v128_store(scales, wasm_u16x8_extend_low_u8x16(sc0));
    wasm_v128_store(scales + 8, wasm_u16x8_extend_high_u8x16(sc0));
    wasm_v128_store(scales + 16, wasm_u16x8_extend_low_u8x16(sc1));
    wasm_v128_store(scales + 24, wasm_u16x8_extend_high_u8x16(sc1));
    const v128_t min0 = bsum_dot_s8(wasm_u8x16_shr(p0, 4), y[i].bsums);
    const v128_t min1 = bsum_dot_s8(wasm_u8x16_shr(p1, 4), y[i].bsums);
    uint32_t dm0, dm1;  // d in the low half, dmin in the high half
    std::memcpy(&dm0, &x0[i].d, 4);
    std::memcpy(&dm1, &x1[i].d, 4);
    const v128_t dm = wasm_f32x4_mul(
        fp16x4_to_f32(wasm_u32x4_extend_low_u16x8(wasm_i32x4_make(static_cast<int32_t>(dm0), static_cast<int32_t>(dm1), 0, 0)), half),
        wasm_f32x4_splat(y[i].d));
    v128_t dot0 = wasm_i32x4_splat(0), dot1 = dot0;
#pragma clang loop unroll(disable)  // unrolled, V8 spills (see scaled_planes)
    for (int ht = 0; ht < 4; ++ht) {
      const int h = ht >> 1, t = ht & 1;
      const v128_t* act_ht = act + 32 * i + 16 * h + 2 * t;  // sub-block 8h + 2j + t at act_ht[4j]
      const EvenOdd q0 = split_u8(load(x0[i].qs + 32 * h + 16 * t)), q1 = split_u8(load(x1[i].qs + 32 * h + 16 * t));
      for (int j = 0; j < 4; ++j) {
        const int k = 8 * h + 2 * j + t;
        const EvenOdd a = {act_ht[4 * j], act_ht[4 * j + 1]};
        const EvenOdd w0 = {wasm_v128_and(wasm_u16x8_shr(q0.even, 2 * j), m3), wasm_v128_and(wasm_u16x8_shr(q0.odd, 2 * j), m3)};
        const EvenOdd w1 = {wasm_v128_and(wasm_u16x8_shr(q1.even, 2 * j), m3), wasm_v128_and(wasm_u16x8_shr(q1.odd, 2 * j), m3)};
        dot0 = wasm_i32x4_add(dot0, wasm_i32x4_dot_i16x8(products16(w0, a), wasm_v128_load16_splat(scales + k)));
        dot1 = wasm_i32x4_add(dot1, wasm_i32x4_dot_i16x8(products16(w1, a), wasm_v128_load16_splat(scales + 16 + k)));
      }
    }
    const v128_t tot = hsum4x4_i32(dot0, min0, dot1, min1);
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), dm));
  }
  *out0 = wasm_f32x4_extract_lane(acc, 0) - wasm_f32x4_extract_lane(acc, 1);
  *out1 = wasm_f32x4_extract_lane(acc, 2) - wasm_f32x4_extract_lane(acc, 3);
}

// Q3_K: u = low2 | hbit << 2 (0..7, hmask[16t + l] bit 4h + j for element 128h + 32j + 16t + l)
// and q = u - 4, taken off as 4 * sum_k sc_k * bsums_k. Per block the rows' totals [row 0, row 1]
// in lanes 0 and 1, times [d0, d1] * y.d.
inline void rows2_q3_k(int64_t nb, const BlockQ3_K* x0, const BlockQ3_K* x1, const BlockQ8_K* y, const v128_t* act,
                       const Consts&, const Fp16Consts& half, float* out0, float* out1) {
  const v128_t m3 = wasm_i8x16_splat(3), m4 = wasm_i8x16_splat(4);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const v128_t sc0 = q3_k_scales(x0[i].scales), sc1 = q3_k_scales(x1[i].scales);  // -32..31
    const v128_t bias0 = wasm_i32x4_shl(bsum_dot_s8(sc0, y[i].bsums), 2);
    const v128_t bias1 = wasm_i32x4_shl(bsum_dot_s8(sc1, y[i].bsums), 2);
    int16_t scales[32];
    wasm_v128_store(scales, wasm_i16x8_extend_low_i8x16(sc0));
    wasm_v128_store(scales + 8, wasm_i16x8_extend_high_i8x16(sc0));
    wasm_v128_store(scales + 16, wasm_i16x8_extend_low_i8x16(sc1));
    wasm_v128_store(scales + 24, wasm_i16x8_extend_high_i8x16(sc1));
    const v128_t d = wasm_f32x4_mul(fp16x4_to_f32(wasm_i32x4_make(x0[i].d, x1[i].d, 0, 0), half), wasm_f32x4_splat(y[i].d));
    v128_t dot0 = wasm_i32x4_splat(0), dot1 = dot0;
#pragma clang loop unroll(disable)
    for (int ht = 0; ht < 4; ++ht) {
      const int h = ht >> 1, t = ht & 1;
      const v128_t* act_ht = act + 32 * i + 16 * h + 2 * t;
      const v128_t q0 = load(x0[i].qs + 32 * h + 16 * t), q1 = load(x1[i].qs + 32 * h + 16 * t);
      const v128_t hm0 = load(x0[i].hmask + 16 * t), hm1 = load(x1[i].hmask + 16 * t);
      // u on whole bytes (16-bit shifts, right first so no bit of the high byte is lost), then split
      auto plane = [&](v128_t q, v128_t hm, int j) {
        const v128_t hb = wasm_i16x8_shl(wasm_u16x8_shr(hm, 4 * h + j), 2);
        return split_u8(wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(q, 2 * j), m3), wasm_v128_and(hb, m4)));
      };
      for (int j = 0; j < 4; ++j) {
        const int k = 8 * h + 2 * j + t;
        const EvenOdd a = {act_ht[4 * j], act_ht[4 * j + 1]};
        dot0 = wasm_i32x4_add(dot0, wasm_i32x4_dot_i16x8(products16(plane(q0, hm0, j), a), wasm_v128_load16_splat(scales + k)));
        dot1 = wasm_i32x4_add(dot1, wasm_i32x4_dot_i16x8(products16(plane(q1, hm1, j), a), wasm_v128_load16_splat(scales + 16 + k)));
      }
    }
    // [row 0, row 1] in lanes 0 and 1 (lanes 2 and 3 are not read)
    const v128_t s0 = wasm_i32x4_sub(dot0, bias0), s1 = wasm_i32x4_sub(dot1, bias1);
    const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
    const v128_t tot = wasm_i32x4_add(ab, wasm_i32x4_shuffle(ab, ab, 2, 3, 2, 3));
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), d));
  }
  *out0 = wasm_f32x4_extract_lane(acc, 0);
  *out1 = wasm_f32x4_extract_lane(acc, 1);
}

}  // namespace ox::kernels::simd128::kquant
