// SIMD128 activation quantizers Q8_0, Q8_1 (blocks of 32) and Q8_K (blocks of 256), writing
// the same bytes as quant_traits(Q8_*).from_float_ref (core/quant/q8.cpp is the recipe):
// same f32 scale arithmetic, x * id rounded by f32x4.nearest (ties to even, as nearbyintf),
// fp16 scales through the same saturating ox::f32_to_fp16.
#include <cfloat>
#include <cstring>
#include <type_traits>

#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// max |x[i]| over 32 floats (pmax: no NaN inputs expected, and then order does not matter).
inline float amax32(const float* x) {
  v128_t m = wasm_f32x4_abs(load(x));
  for (int j = 4; j < 32; j += 4) m = wasm_f32x4_pmax(m, wasm_f32x4_abs(load(x + j)));
  m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
  m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(m, 0);
}

// nearbyint(x * scale) clamped to [-127, 127] in float like the reference's fmin/fmax (the
// clamp only bites for Q8_K; pmax/pmin also map a NaN to -127 as fmax/fmin do there).
inline v128_t round4(const float* x, v128_t scale) {
  const v128_t r = wasm_f32x4_nearest(wasm_f32x4_mul(load(x), scale));
  const v128_t clamped = wasm_f32x4_pmin(wasm_f32x4_splat(127.0f), wasm_f32x4_pmax(wasm_f32x4_splat(-127.0f), r));
  return wasm_i32x4_trunc_sat_f32x4(clamped);
}

// Rounds x[0..31] * scale to int8 in element order; returns their sum.
inline int32_t round_store32(const float* x, float scale, int8_t* out) {
  const v128_t m = wasm_f32x4_splat(scale);
  v128_t sum = wasm_i32x4_splat(0);
  for (int j = 0; j < 32; j += 16) {
    const v128_t i0 = round4(x + j, m), i1 = round4(x + j + 4, m);
    const v128_t i2 = round4(x + j + 8, m), i3 = round4(x + j + 12, m);
    const v128_t b = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(i0, i1), wasm_i16x8_narrow_i32x4(i2, i3));
    wasm_v128_store(out + j, b);
    sum = wasm_i32x4_add(sum, wasm_i32x4_add(wasm_i32x4_add(i0, i1), wasm_i32x4_add(i2, i3)));
  }
  return hsum_i32(sum);
}

// Blocks of 32 (Q8_0; Q8_1 also keeps d * sum of its quants) or of 256 (Q8_K: an f32 scale and
// the sum of each 16 quants).
template <DType A>
void quantize_row(const float* x, void* vy, int64_t n) {
  if constexpr (A == DType::Q8_K) {
    BlockQ8_K* y = static_cast<BlockQ8_K*>(vy);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
      const float* xb = x + i * kQK_K;
      float amax = 0.0f;
      for (int j = 0; j < kQK_K; j += 32) amax = __builtin_fmaxf(amax, amax32(xb + j));
      if (amax < 127.0f * FLT_MIN) {  // iscale would overflow: the reference writes a zero block
        std::memset(&y[i], 0, sizeof(BlockQ8_K));
        continue;
      }
      const float iscale = 127.0f / amax;
      for (int j = 0; j < kQK_K; j += 32) round_store32(xb + j, iscale, y[i].qs + j);
      y[i].d = 1.0f / iscale;
      for (int g = 0; g < kQK_K / 16; ++g) {
        const v128_t q = load(y[i].qs + 16 * g);
        const v128_t pairs = wasm_i32x4_add(wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extend_low_i8x16(q)),
                                            wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extend_high_i8x16(q)));
        y[i].bsums[g] = static_cast<int16_t>(hsum_i32(pairs));
      }
    }
  } else {
    static_assert(A == DType::Q8_0 || A == DType::Q8_1);
    using Block = std::conditional_t<A == DType::Q8_0, BlockQ8_0, BlockQ8_1>;
    static_assert(kQK8_0 == 32 && kQK8_1 == 32);
    Block* y = static_cast<Block*>(vy);
    for (int64_t i = 0; i < n / 32; ++i) {
      const float d = amax32(x + i * 32) / 127.0f;
      const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;  // 1/d of a subnormal d would overflow
      y[i].d = fp16_saturate(d);
      const int32_t sum = round_store32(x + i * 32, id, y[i].qs);
      if constexpr (A == DType::Q8_1) {
        y[i].s = fp16_saturate(d * static_cast<float>(sum));  // unrounded d, as the reference
      }
    }
  }
}

}  // namespace

void register_quantizers(KernelTable& t) {
  t.quantize_row[static_cast<uint32_t>(DType::Q8_0)] = quantize_row<DType::Q8_0>;
  t.quantize_row[static_cast<uint32_t>(DType::Q8_1)] = quantize_row<DType::Q8_1>;
  t.quantize_row[static_cast<uint32_t>(DType::Q8_K)] = quantize_row<DType::Q8_K>;
}

}  // namespace ox::kernels::simd128
