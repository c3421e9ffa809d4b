// Scalar references of MXFP4 (OCP microscaling FP4: blocks of 32 E2M1 codes sharing one E8M0
// power-of-two scale, x = 2^(e - 128) * kMXFP4Values[q]), whose dot product pairs with Q8_0.
// The quantizer is llama.cpp's quantize_row_mxfp4_ref: the scale from amax's exponent, then the
// nearest code per element.
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

int mxfp4_code(const uint8_t* qs, int j) { return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4); }

// The code whose value times d is nearest x; on a tie the lower code, so +0 (code 0) beats -0 (8).
uint8_t nearest_mxfp4_code(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kMXFP4Values[0]) * d - x);
  for (int q = 1; q < 16; ++q) {
    const float err = std::fabs(static_cast<float>(kMXFP4Values[q]) * d - x);
    if (err < best_err) {
      best = q;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best);
}

}  // namespace

void dequantize_mxfp4(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQKMXFP4 == 0);
  const BlockMXFP4* x = static_cast<const BlockMXFP4*>(vx);
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    const float d = mxfp4_scale(x[b].e);
    for (int j = 0; j < kQKMXFP4; ++j) {
      y[b * kQKMXFP4 + j] = static_cast<float>(kMXFP4Values[mxfp4_code(x[b].qs, j)]) * d;
    }
  }
}

void quantize_mxfp4(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQKMXFP4 == 0);
  BlockMXFP4* y = static_cast<BlockMXFP4*>(vy);
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    const float* xb = x + b * kQKMXFP4;
    float amax = 0.0f;
    for (int j = 0; j < kQKMXFP4; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    // amax in [2^k, 2^(k+1)) gives d = 2^(k-3): the largest code, 12 (6.0 in E2M1), covers up to
    // 1.5 * 2^k and larger elements clip. log2f as llama.cpp calls it, so that amax a few ulps
    // below a power of two rounds up the same way. The clamp keeps e a valid E8M0 byte where
    // llama.cpp's cast is undefined (amax below 2^-125 would give a negative exponent).
    const uint8_t e = amax > 0.0f ? static_cast<uint8_t>(trunc_clamp(std::floor(std::log2(amax)) + 125.0f, 0, 254)) : 0;
    const float d = mxfp4_scale(e);
    y[b].e = e;
    for (int j = 0; j < 16; ++j) {
      y[b].qs[j] = static_cast<uint8_t>(nearest_mxfp4_code(xb[j], d) | (nearest_mxfp4_code(xb[j + 16], d) << 4));
    }
  }
}

void vec_dot_mxfp4_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQKMXFP4 == 0);
  const BlockMXFP4* x = static_cast<const BlockMXFP4*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQKMXFP4; ++j) isum += kMXFP4Values[mxfp4_code(x[b].qs, j)] * y[b].qs[j];
    sum += (mxfp4_scale(x[b].e) * fp16_to_f32(y[b].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

}  // namespace ox::quant
