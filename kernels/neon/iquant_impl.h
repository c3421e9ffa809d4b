// Body of the NEON dot products of the codebook i-quants against Q8_K, one template over the
// loaders of iquant_load.h and the int8 dot primitive (DotNeon here, SDOT in neon/dotprod/).
// Reference: quant_traits(IQ2_XXS..IQ1_M).vec_dot_ref. Per super-block the integer sum is the
// reference's, then (d_w * d_a) * isum is added in block order and the sum scaled by kDotFactor
// last: the reference's float operations in its order (and no FMA contraction: -ffp-contract=off).
#pragma once

#include "core/quant/blocks.h"
#include "kernels/neon/iquant_load.h"

namespace ox::kernels::neon_common {
namespace {

template <typename Dot, typename Load>
void iquant_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  constexpr int kVecs = Load::kVecs;
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* b = x + static_cast<uint64_t>(i) * Load::kBytes;
    int8_t scales[16];  // unit u's scale, read back one at a time (store forwarding works for that)
    vst1q_s8(scales, Load::scales(b));
    int32x4_t sumi = vdupq_n_s32(0);
    for (int g = 0; g < Load::kGroups; ++g) {
      unroll<Load::kPerGroup>([&](auto kc) {
        constexpr int k = decltype(kc)::value;
        const int u = Load::unit(g, k);
        int8x16_t w[kVecs];
        Load::template unpack<k>(b, g, w);
        const int8_t* a = y[i].qs + 16 * kVecs * u;
        int32x4_t d = Dot::dot(vdupq_n_s32(0), w[0], vld1q_s8(a));
        for (int v = 1; v < kVecs; ++v) d = Dot::dot(d, w[v], vld1q_s8(a + 16 * v));
        sumi = vmlaq_n_s32(sumi, d, scales[u]);
      });
    }
    sum += (Load::d(b) * y[i].d) * static_cast<float>(vaddvq_s32(sumi));
  }
  *s = Load::kDotFactor * sum;
}

}  // namespace
}  // namespace ox::kernels::neon_common
