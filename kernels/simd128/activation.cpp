// SIMD128 SwiGLU activation, 4 floats per step. Reference: ox::silu_mul_ref (core/base/activation.cpp)
// and its exp, ox::exp_bounded (core/base/exp_bounded.h), which this must match bit for bit: the
// same float operations in the same order, each rounded on its own (wasm has no fused multiply-add).
// clang does not vectorise the reference for wasm, and a decode step of a 1B model spends ~1% of
// its time there.
#include <wasm_simd128.h>

#include "core/base/activation.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
namespace {

// exp_bounded on 4 lanes.
inline v128_t exp_bounded(v128_t v) {
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

}  // namespace

void silu_mul(float* x, const float* y, int64_t n) {
  const v128_t sign = wasm_f32x4_splat(-0.0f);
  const v128_t lo = wasm_f32x4_splat(-87.0f), hi = wasm_f32x4_splat(88.0f), one = wasm_f32x4_splat(1.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    // -v by its sign bit, as the reference negates (0 - v would turn -0 into +0). The clamps are the
    // pseudo-min/max, whose definitions (b < a ? b : a, a < b ? b : a) are the reference's
    // comparisons, NaN included.
    v128_t minus_v = wasm_v128_xor(v, sign);
    minus_v = wasm_f32x4_pmin(wasm_f32x4_pmax(minus_v, lo), hi);
    const v128_t e = exp_bounded(minus_v);
    const v128_t silu = wasm_f32x4_div(v, wasm_f32x4_add(one, e));
    wasm_v128_store(x + i, wasm_f32x4_mul(silu, wasm_v128_load(y + i)));
  }
  silu_mul_ref(x + i, y + i, n - i);  // the last n % 4
}

}  // namespace ox::kernels::simd128
