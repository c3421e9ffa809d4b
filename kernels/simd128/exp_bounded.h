// exp_bounded on four lanes: ox::exp_bounded (core/base/exp_bounded.h) bit for bit, the same float
// operations in the same order, each rounded on its own (wasm has no fused multiply-add). Shared by
// SwiGLU (activation.cpp) and attention's softmax (attention.cpp).
#pragma once

#include <wasm_simd128.h>

namespace ox::kernels::simd128 {

static inline v128_t exp_bounded(v128_t v) {
  const v128_t round = wasm_f32x4_splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const v128_t shifted = wasm_f32x4_add(wasm_f32x4_mul(v, wasm_f32x4_splat(1.44269504088896341f)), round);
  const v128_t n = wasm_f32x4_sub(shifted, round);
  const v128_t n_ln2_hi = wasm_f32x4_mul(n, wasm_f32x4_splat(0.693145751953125f));
  const v128_t n_ln2_lo = wasm_f32x4_mul(n, wasm_f32x4_splat(1.428606765330187e-06f));
  const v128_t r = wasm_f32x4_sub(wasm_f32x4_sub(v, n_ln2_hi), n_ln2_lo);
  // Horner from r^7 / 7! down, as the reference.
  v128_t p = wasm_f32x4_splat(1.0f / 5040.0f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 720.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 120.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 24.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 6.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(0.5f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  // 2^n: the low mantissa bits of `shifted` hold n (two's complement), rebiased into the exponent
  // field as the reference's (bits - 0x4B400000 + 127) << 23.
  const v128_t scale_bits = wasm_i32x4_shl(wasm_i32x4_add(shifted, wasm_i32x4_splat(127 - 0x4B400000)), 23);
  return wasm_f32x4_mul(p, scale_bits);
}

}  // namespace ox::kernels::simd128
