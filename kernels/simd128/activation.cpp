// SIMD128 SwiGLU activation, 4 floats per step. Reference: ox::silu_mul_ref (core/base/activation.cpp)
// and its exp, ox::exp_bounded (core/base/exp_bounded.h), which this must match bit for bit: the
// same float operations in the same order, each rounded on its own (wasm has no fused multiply-add).
// clang does not vectorise the reference for wasm, and a decode step of a 1B model spends ~1% of
// its time there.
#include <wasm_simd128.h>

#include "core/base/activation.h"
#include "kernels/simd128/exp_bounded.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

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
