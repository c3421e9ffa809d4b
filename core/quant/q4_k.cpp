// Scalar reference of Q4_K: super-blocks of 256 = 8 sub-blocks of 32, x = d * sc * q - dmin * m
// with 4-bit q and 6-bit (sc, m) packed in 12 bytes (unpack_scale_min_k4). Each 64 elements share
// 32 qs bytes: element 64*c + l in the low nibble of qs[32*c + l], 64*c + 32 + l in the high one.
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/k_pack.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {

void dequantize_q4_k(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const float dmin = fp16_to_f32(x[b].dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      unpack_scale_min_k4(j, x[b].scales, &sc, &m);
      const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        y[b * kQK_K + 32 * j + l] = dl * static_cast<float>(q4_k_nibble(x[b].qs, 32 * j + l)) - ml;
      }
    }
  }
}

namespace {

// One row, plain (importance null) or under importance.
void quantize_q4_k_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK_K == 0);
  BlockQ4_K* y = static_cast<BlockQ4_K*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    BlockQ4_K& out = y[b];
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K];
    scale_pow2(xb, xn, kQK_K, e);
    uint8_t L[kQK_K];
    float d, dmin;
    if (importance != nullptr) {
      fit_k_scales_mins_weighted(xn, importance + b * kQK_K, 15, L, out.scales, &d, &dmin);
    } else {
      fit_k_scales_mins(xn, 15, -1.0f, 0.1f, 20, L, out.scales, &d, &dmin);
    }
    out.d = fp16_saturate(std::ldexp(d, e));
    out.dmin = fp16_saturate(std::ldexp(dmin, e));
    requantize_k_levels(xb, 15, fp16_to_f32(out.d), fp16_to_f32(out.dmin), out.scales, L);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        out.qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

}  // namespace

void quantize_q4_k(const float* x, void* y, int64_t n) { quantize_q4_k_row(x, y, n, nullptr); }

void quantize_rows_q4_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q4_K, quantize_q4_k, quantize_q4_k_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_q4_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0, msum = 0;  // sum_j sc_j * sum(q * y); sum_j m_j * (bsums of sub-block j)
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      unpack_scale_min_k4(j, x[b].scales, &sc, &m);
      int32_t sub = 0;
      for (int l = 0; l < 32; ++l) sub += q4_k_nibble(x[b].qs, 32 * j + l) * y[b].qs[32 * j + l];
      isum += sc * sub;
      msum += m * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
    }
    const float dall = fp16_to_f32(x[b].d) * y[b].d;
    const float dmin = fp16_to_f32(x[b].dmin) * y[b].d;
    sum += dall * static_cast<float>(isum) - dmin * static_cast<float>(msum);
  }
  *s = sum;
}

}  // namespace ox::quant
