// Bodies of the NEON dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K, templated
// on the int8 dot primitive (DotNeon in neon/tq_dot.cpp, SDOT in neon/dotprod/tq_dot.cpp). The
// weights t - 1 (-1..1; TQ2_0's code 3 gives 2) go to the dot as signed bytes, so no sum(a) term.
// Reference: quant_traits(TQ1_0 / TQ2_0).vec_dot_ref, bit for bit: one int per block, its float
// term added in block order (see kernels/x86/avx2/tq.cpp).
#pragma once

#include "core/quant/blocks.h"
#include "kernels/neon/util.h"

namespace ox::kernels::neon_common {
namespace {

// t - 1 for trit k of each TQ1_0 byte, given q = byte * 3^k mod 256 (core/quant/tq.cpp): the trit
// is floor(3q / 256), which is 1 from q = 86 and 2 from q = 171; the compares' all-ones bytes are -1.
inline int8x16_t trit_weights(uint8x16_t q) {
  const int8x16_t ge86 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(86)));
  const int8x16_t ge171 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(171)));
  return vsubq_s8(vsubq_s8(vdupq_n_s8(-1), ge86), ge171);
}

template <typename Dot>
void tq1_0_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ1_0* x = static_cast<const BlockTQ1_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  // qh's four bytes repeated; byte 4k + m is element 240 + 4k + m, trit k of qh[m].
  static constexpr uint8_t kPow3Qh[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
  const uint8x16_t pow3_qh = vld1q_u8(kPow3Qh);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* a = y[i].qs;
    const uint8x16_t b0 = vld1q_u8(x[i].qs), b1 = vld1q_u8(x[i].qs + 16), b2 = vld1q_u8(x[i].qs + 32);
    int32x4_t sumi = vdupq_n_s32(0);
    for (int k = 0; k < 5; ++k) {
      const uint8x16_t p = vdupq_n_u8(kPow3[k]);
      // qs[0..31]: element 32k + m; qs[32..47]: element 160 + 16k + m.
      sumi = Dot::dot(sumi, trit_weights(vmulq_u8(b0, p)), vld1q_s8(a + 32 * k));
      sumi = Dot::dot(sumi, trit_weights(vmulq_u8(b1, p)), vld1q_s8(a + 32 * k + 16));
      sumi = Dot::dot(sumi, trit_weights(vmulq_u8(b2, p)), vld1q_s8(a + 160 + 16 * k));
    }
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, 4);
    const uint8x16_t bh = vreinterpretq_u8_u32(vdupq_n_u32(qh));
    sumi = Dot::dot(sumi, trit_weights(vmulq_u8(bh, pow3_qh)), vld1q_s8(a + 240));
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(vaddvq_s32(sumi));
  }
  *s = sum;
}

template <typename Dot>
void tq2_0_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ2_0* x = static_cast<const BlockTQ2_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const uint8x16_t m2 = vdupq_n_u8(3);
  const int8x16_t one = vdupq_n_s8(1);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int32x4_t sumi = vdupq_n_s32(0);
    // qs[32j + m] holds elements 128j + 32l + m at bits 2l..2l+1; 16 bytes (m = 16h..16h+15) at a time.
    for (int jh = 0; jh < 4; ++jh) {
      const int j = jh >> 1, h = jh & 1;
      const uint8x16_t q = vld1q_u8(x[i].qs + 32 * j + 16 * h);
      const int8_t* a = y[i].qs + 128 * j + 16 * h;
      const uint8x16_t codes[4] = {vandq_u8(q, m2), vandq_u8(vshrq_n_u8(q, 2), m2), vandq_u8(vshrq_n_u8(q, 4), m2),
                                   vshrq_n_u8(q, 6)};
      for (int l = 0; l < 4; ++l) {
        sumi = Dot::dot(sumi, vsubq_s8(vreinterpretq_s8_u8(codes[l]), one), vld1q_s8(a + 32 * l));
      }
    }
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(vaddvq_s32(sumi));
  }
  *s = sum;
}

}  // namespace
}  // namespace ox::kernels::neon_common
