// NEON activation quantizers Q8_0, Q8_1 (blocks of 32) and Q8_K (blocks of 256), writing the
// same bytes as quant_traits(Q8_*).from_float_ref (core/quant/q8.cpp is the recipe): same f32
// scale arithmetic, x * id rounded by frintn (ties to even, as nearbyintf), then clamped with
// fmaxnm / fminnm exactly as the reference's fmax / fmin, fp16 scales through the same
// saturating ox::f32_to_fp16.
#include <cfloat>
#include <cstring>
#include <type_traits>

#include "core/quant/blocks.h"
#include "kernels/neon/neon.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon {
namespace {

using neon_common::fp16_saturate;

inline float amax32(const float* x) {
  float32x4_t m = vabsq_f32(vld1q_f32(x));
  for (int j = 4; j < 32; j += 4) m = vmaxq_f32(m, vabsq_f32(vld1q_f32(x + j)));
  return vmaxvq_f32(m);
}

inline int32x4_t round4(const float* x, float scale) {
  const float32x4_t r = vrndnq_f32(vmulq_n_f32(vld1q_f32(x), scale));
  return vcvtq_s32_f32(vminnmq_f32(vdupq_n_f32(127.0f), vmaxnmq_f32(vdupq_n_f32(-127.0f), r)));
}

// Rounds x[0..31] * scale to int8 in element order; returns their sum.
inline int32_t round_store32(const float* x, float scale, int8_t* out) {
  int32x4_t sum = vdupq_n_s32(0);
  for (int j = 0; j < 32; j += 8) {
    const int32x4_t a = round4(x + j, scale), b = round4(x + j + 4, scale);
    const int16x8_t h = vcombine_s16(vqmovn_s32(a), vqmovn_s32(b));
    vst1_s8(out + j, vqmovn_s16(h));
    sum = vaddq_s32(sum, vaddq_s32(a, b));
  }
  return vaddvq_s32(sum);
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
      for (int g = 0; g < kQK_K / 16; ++g) y[i].bsums[g] = vaddlvq_s8(vld1q_s8(y[i].qs + 16 * g));
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

}  // namespace ox::kernels::neon
