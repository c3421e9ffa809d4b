// Scalar references of the 8-bit formats: Q8_0 (weights and activations), Q8_1 and Q8_K
// (activations only). The quantizers are THE activation recipe: SIMD versions reproduce them
// bit for bit, so every rounding here is nearbyintf (ties to even, default rounding mode), and
// fp16 scales saturate at +-65504 instead of overflowing to Inf.
#include <cfloat>
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/traits.h"

namespace ox::quant {
namespace {

// Shared by Q8_0 and Q8_1: d = amax / 127, q = nearbyint(x * (1/d)); returns d.
// A d below FLT_MIN (amax < ~1.5e-36, stored as fp16 0 anyway) gives all-zero quants: 1/d
// could overflow to Inf and Inf * 0 is NaN.
float quantize_block_q8(const float* x, int8_t* qs) {
  float amax = 0.0f;
  for (int j = 0; j < kQK8_0; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK8_0; ++j) qs[j] = static_cast<int8_t>(std::nearbyintf(x[j] * id));
  return d;
}

}  // namespace

void dequantize_q8_0(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK8_0 == 0);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK8_0; ++j) y[b * kQK8_0 + j] = d * x[b].qs[j];
  }
}

void quantize_q8_0(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK8_0 == 0);
  BlockQ8_0* y = static_cast<BlockQ8_0*>(vy);
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    y[b].d = fp16_saturate(quantize_block_q8(x + b * kQK8_0, y[b].qs));
  }
}

// Weights: llama.cpp's quantize_q8_0 (quantize_row_q8_0_ref) rounds with roundf, ties away from
// zero, where the activation recipe above rounds ties to even as ggml's SIMD quantizers do. F16
// weights, whose values have few mantissa bits, land on ties, and the file must be llama-quantize's.
void quantize_rows_q8_0(const float* x, void* vy, int64_t n_rows, int64_t n_per_row, const float* /*importance*/) {
  OX_CHECK(n_per_row % kQK8_0 == 0);
  BlockQ8_0* y = static_cast<BlockQ8_0*>(vy);
  for (int64_t b = 0; b < n_rows * n_per_row / kQK8_0; ++b) {
    const float* xb = x + b * kQK8_0;
    float amax = 0.0f;
    for (int j = 0; j < kQK8_0; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK8_0; ++j) y[b].qs[j] = static_cast<int8_t>(std::roundf(xb[j] * id));
    y[b].d = fp16_saturate(d);
  }
}

void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK8_0 == 0);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQK8_0; ++j) isum += x[b].qs[j] * y[b].qs[j];
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

void dequantize_q8_1(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK8_1 == 0);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(vx);
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK8_1; ++j) y[b * kQK8_1 + j] = d * x[b].qs[j];
  }
}

void quantize_q8_1(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK8_1 == 0);
  BlockQ8_1* y = static_cast<BlockQ8_1*>(vy);
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    const float d = quantize_block_q8(x + b * kQK8_1, y[b].qs);
    int32_t sum = 0;
    for (int j = 0; j < kQK8_1; ++j) sum += y[b].qs[j];
    y[b].d = fp16_saturate(d);
    // s uses the unrounded d: it stands for d * sum(q), the block's sum as the dot product sees it.
    y[b].s = fp16_saturate(d * static_cast<float>(sum));
  }
}

void dequantize_q8_k(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    for (int j = 0; j < kQK_K; ++j) y[b * kQK_K + j] = x[b].d * x[b].qs[j];
  }
}

void quantize_q8_k(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  BlockQ8_K* y = static_cast<BlockQ8_K*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    BlockQ8_K& out = y[b];
    float amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    // amax below 127 * FLT_MIN would make iscale Inf (and Inf * 0 NaN): such a block is zero.
    if (amax < 127.0f * FLT_MIN) {
      out.d = 0.0f;
      for (int j = 0; j < kQK_K; ++j) out.qs[j] = 0;
      for (int g = 0; g < kQK_K / 16; ++g) out.bsums[g] = 0;
      continue;
    }
    const float iscale = 127.0f / amax;
    for (int j = 0; j < kQK_K; ++j) {
      // |iscale * x| <= 127 up to one rounding of the product; the clamp makes it exact.
      const float v = std::fmin(127.0f, std::fmax(-127.0f, std::nearbyintf(iscale * xb[j])));
      out.qs[j] = static_cast<int8_t>(v);
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int32_t sum = 0;
      for (int j = 0; j < 16; ++j) sum += out.qs[g * 16 + j];
      out.bsums[g] = static_cast<int16_t>(sum);
    }
    out.d = 1.0f / iscale;
  }
}

}  // namespace ox::quant
