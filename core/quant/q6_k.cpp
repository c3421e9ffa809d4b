// Scalar reference of Q6_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * (q - 32) with
// 6-bit q and signed 8-bit sc. Per half h (128 elements), element 128h + 32k + l (k = 0..3) keeps
// its low 4 bits in ql[64h + l + 32*(k&1)] (low nibble for k < 2, high for k >= 2) and its top 2
// bits in bits 2k..2k+1 of qh[32h + l].
#include <cmath>
#include <cstring>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

int q6_value(const BlockQ6_K& b, int i) {
  const int h = i / 128, k = (i % 128) / 32, l = i % 32;
  const uint8_t lq = b.ql[64 * h + l + 32 * (k & 1)];
  const int low = k < 2 ? (lq & 0xF) : (lq >> 4);
  const int high = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return low | (high << 4);
}

}  // namespace

void dequantize_q6_k(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int i = 0; i < kQK_K; ++i) {
      y[b * kQK_K + i] = d * static_cast<float>(x[b].scales[i / 16]) * static_cast<float>(q6_value(x[b], i) - 32);
    }
  }
}

namespace {

// One row, plain (importance null: each sub-block's fit weighted by x^2) or with each sub-block's
// fit weighted by the importance itself (llama.cpp's quantize_row_q6_K_impl, which leaves out the
// sqrt(sigma2 + x^2) factor the other K-quants use).
void quantize_q6_k_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK_K == 0);
  BlockQ6_K* y = static_cast<BlockQ6_K*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    BlockQ6_K& out = y[b];
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K];
    scale_pow2(xb, xn, kQK_K, e);
    uint8_t L[kQK_K];
    float scales[16];
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int j = 0; j < 16; ++j) {
      const float* w = importance != nullptr ? importance + b * kQK_K + 16 * j : nullptr;
      scales[j] = fit_symmetric(16, 32, xn + 16 * j, w, L + 16 * j);
      if (std::fabs(scales[j]) > amax_scale) {
        amax_scale = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    if (amax_scale < kGroupMaxEps) {  // all zeros: every byte 0, as llama.cpp writes it
      std::memset(&out, 0, sizeof(out));
      continue;
    }
    // The sub-block scale of largest magnitude maps to -128 (the wide end of int8).
    const float iscale = -128.0f / max_scale;
    out.d = fp16_saturate(std::ldexp(1.0f / iscale, e));
    for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<int8_t>(round_clamp(iscale * scales[j], -128, 127));
    const float d = fp16_to_f32(out.d);
    for (int j = 0; j < 16; ++j) {
      const float dl = d * static_cast<float>(out.scales[j]);
      if (dl == 0.0f) continue;
      for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<uint8_t>(round_clamp(xb[16 * j + l] / dl, -32, 31) + 32);
    }
    for (int i = 0; i < kQK_K / 2; ++i) out.ql[i] = 0;
    for (int i = 0; i < kQK_K / 4; ++i) out.qh[i] = 0;
    for (int i = 0; i < kQK_K; ++i) {
      const int h = i / 128, k = (i % 128) / 32, l = i % 32;
      const int low = L[i] & 0xF, high = L[i] >> 4;
      out.ql[64 * h + l + 32 * (k & 1)] |= static_cast<uint8_t>(k < 2 ? low : low << 4);
      out.qh[32 * h + l] |= static_cast<uint8_t>(high << (2 * k));
    }
  }
}

}  // namespace

void quantize_q6_k(const float* x, void* y, int64_t n) { quantize_q6_k_row(x, y, n, nullptr); }

void quantize_rows_q6_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q6_K, quantize_q6_k, quantize_q6_k_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_q6_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0;  // sum_j sc_j * sum_{i in j} (q_i - 32) * y_i
    for (int j = 0; j < 16; ++j) {
      int32_t sub = 0;
      for (int l = 0; l < 16; ++l) sub += (q6_value(x[b], 16 * j + l) - 32) * y[b].qs[16 * j + l];
      isum += x[b].scales[j] * sub;
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = sum;
}

}  // namespace ox::quant
