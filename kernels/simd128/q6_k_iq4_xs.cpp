// SIMD128 dot products of Q6_K and IQ4_XS against Q8_K.
// Reference: quant_traits(Q6_K / IQ4_XS).vec_dot_ref; integer parts exact.
#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {

void vec_dot_q6_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const v128_t m4 = wasm_i8x16_splat(0x0F), m30 = wasm_i8x16_splat(0x30);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const v128_t sc8 = load(x[i].scales);
    // q - 32 with q in 0..63: start from -32 * sum_k sc_k * bsums_k.
    const v128_t bias = wasm_i32x4_add(wasm_i32x4_dot_i16x8(load(y[i].bsums), wasm_i16x8_extend_low_i8x16(sc8)),
                                       wasm_i32x4_dot_i16x8(load(y[i].bsums + 8), wasm_i16x8_extend_high_i8x16(sc8)));
    // Half h, bytes l = 16t..16t+15: ql[64h + l] low / high nibble = elements +0 / +64,
    // ql[64h + 32 + l] = +32 / +96; qh[32h + l] bits 0-1, 2-3, 4-5, 6-7 = their top bits.
    EvenOdd planes[2][2][4];
    for (int h = 0; h < 2; ++h) {
      for (int t = 0; t < 2; ++t) {
        const v128_t l0 = load(x[i].ql + 64 * h + 16 * t), l1 = load(x[i].ql + 64 * h + 32 + 16 * t);
        const v128_t qh = load(x[i].qh + 32 * h + 16 * t);
        const v128_t q0 = wasm_v128_or(wasm_v128_and(l0, m4), wasm_v128_and(wasm_i16x8_shl(qh, 4), m30));
        const v128_t q1 = wasm_v128_or(wasm_v128_and(l1, m4), wasm_v128_and(wasm_i16x8_shl(qh, 2), m30));
        const v128_t q2 = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(l0, 4), m4), wasm_v128_and(qh, m30));
        const v128_t q3 =
            wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(l1, 4), m4), wasm_v128_and(wasm_u16x8_shr(qh, 2), m30));
        planes[h][t][0] = split_u8(q0);
        planes[h][t][1] = split_u8(q1);
        planes[h][t][2] = split_u8(q2);
        planes[h][t][3] = split_u8(q3);
      }
    }
    int8_t scales[16];
    wasm_v128_store(scales, sc8);
    const v128_t sumi = scaled_planes(y[i].qs, scales, [&](int h, int t, int j) { return planes[h][t][j]; });
    acc = mul_add(acc, wasm_i32x4_sub(sumi, wasm_i32x4_shl(bias, 5)), y[i].d * fp16(x[i].d));
  }
  *s = hsum_f32(acc);
}

void vec_dot_iq4_xs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const v128_t table = load(kIQ4NLValues);
  const v128_t m4 = wasm_i8x16_splat(0x0F);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    v128_t sumi = wasm_i32x4_splat(0);
    for (int ib = 0; ib < 8; ++ib) {  // sub-block of 32: low nibbles elements 0..15, high 16..31
      const v128_t q = load(x[i].qs + 16 * ib);
      const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, m4));
      const v128_t hi = wasm_i8x16_swizzle(table, wasm_v128_and(wasm_u16x8_shr(q, 4), m4));
      const int8_t* a = y[i].qs + 32 * ib;
      const v128_t d =
          wasm_i32x4_add(dot16(split_s8(lo), split_s8(load(a))), dot16(split_s8(hi), split_s8(load(a + 16))));
      const int ls = iq4_xs_scale(x[i].scales_l, x[i].scales_h, ib) - 32;
      sumi = wasm_i32x4_add(sumi, wasm_i32x4_mul(d, wasm_i32x4_splat(ls)));
    }
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
  }
  *s = hsum_f32(acc);
}

}  // namespace ox::kernels::simd128
