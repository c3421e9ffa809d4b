// Scalar references of IQ4_NL (blocks of 32, x = d * kIQ4NLValues[q]) and IQ4_XS (super-blocks of
// 256 = 8 sub-blocks of 32, x = d * (ls - 32) * kIQ4NLValues[q], 6-bit ls split 4 + 2 bits).
// Both keep element j of a 32-group in the low nibble of qs[j] (j < 16) or the high of qs[j-16].
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

int iq4_index(const uint8_t* qs, int j) { return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4); }

void pack_iq4(const uint8_t* idx, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(idx[j] | (idx[j + 16] << 4));
}

int iq4_xs_scale(const BlockIQ4_XS& b, int ib) {
  const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * ib)) & 3;
  return (low | (high << 4)) - 32;
}

// Error weights of one group (llama.cpp's quantize_row_iq4_nl_impl): x^2 without importance,
// importance * sqrt(sigma2 + x^2) with it, sigma2 twice the mean square of the super-block.
void group_weights(const float* x, const float* importance, float sigma2, int n, float* w) {
  if (importance != nullptr) {
    importance_weights(x, importance, sigma2, n, w);
  } else {
    for (int j = 0; j < n; ++j) w[j] = x[j] * x[j];
  }
}

// One row of IQ4_NL; importance null or n weights.
void quantize_iq4_nl_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK4_NL == 0);
  BlockIQ4_NL* y = static_cast<BlockIQ4_NL*>(vy);
  for (int64_t b = 0; b < n / kQK4_NL; ++b) {
    const float* xb = x + b * kQK4_NL;
    const int e = group_exponent(xb, kQK4_NL);
    float xn[kQK4_NL], w[kQK4_NL];
    uint8_t idx[kQK4_NL];
    scale_pow2(xb, xn, kQK4_NL, e);
    const float sigma2 = sum_squares(xn, kQK4_NL) * (2.0f / kQK4_NL);
    group_weights(xn, importance != nullptr ? importance + b * kQK4_NL : nullptr, sigma2, kQK4_NL, w);
    const float d = fit_nonlinear(kQK4_NL, kIQ4NLValues, xn, w, 7);
    y[b].d = fp16_saturate(std::ldexp(d, e));
    // Indices against the fitted scale (before fp16 rounding, as llama.cpp picks them).
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK4_NL; ++j) idx[j] = static_cast<uint8_t>(nearest_level(kIQ4NLValues, id * xn[j]));
    pack_iq4(idx, y[b].qs);
  }
}

// One row of IQ4_XS; importance null or n weights.
void quantize_iq4_xs_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK_K == 0);
  BlockIQ4_XS* y = static_cast<BlockIQ4_XS*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    BlockIQ4_XS& out = y[b];
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K], w[32], scales[8];
    uint8_t idx[32];
    scale_pow2(xb, xn, kQK_K, e);
    const float sigma2 = sum_squares(xn, kQK_K) * (2.0f / kQK_K);
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < 8; ++ib) {
      group_weights(xn + 32 * ib, importance != nullptr ? importance + b * kQK_K + 32 * ib : nullptr, sigma2, 32, w);
      scales[ib] = fit_nonlinear(32, kIQ4NLValues, xn + 32 * ib, w, 7);
      if (std::fabs(scales[ib]) > amax_scale) {
        amax_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    // Sub-block scales become 6-bit signed integers (stored +32) times d; the largest maps to -32.
    // The indices are picked against d * l before fp16 rounding, as llama.cpp does.
    const float d = -max_scale / 32.0f;
    out.d = fp16_saturate(std::ldexp(d, e));
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out.scales_h = 0;
    for (int k = 0; k < 4; ++k) out.scales_l[k] = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int l = round_clamp(id * scales[ib], -32, 31);
      const int stored = l + 32;
      out.scales_l[ib / 2] |= static_cast<uint8_t>((stored & 0xF) << (4 * (ib % 2)));
      out.scales_h |= static_cast<uint16_t>((stored >> 4) << (2 * ib));
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
      for (int j = 0; j < 32; ++j) idx[j] = static_cast<uint8_t>(nearest_level(kIQ4NLValues, idl * xn[32 * ib + j]));
      pack_iq4(idx, out.qs + 16 * ib);
    }
  }
}

}  // namespace

void dequantize_iq4_nl(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK4_NL == 0);
  const BlockIQ4_NL* x = static_cast<const BlockIQ4_NL*>(vx);
  for (int64_t b = 0; b < n / kQK4_NL; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK4_NL; ++j) y[b * kQK4_NL + j] = d * static_cast<float>(kIQ4NLValues[iq4_index(x[b].qs, j)]);
  }
}

void quantize_iq4_nl(const float* x, void* y, int64_t n) { quantize_iq4_nl_row(x, y, n, nullptr); }

void quantize_rows_iq4_nl(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::IQ4_NL, quantize_iq4_nl, quantize_iq4_nl_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK4_NL == 0);
  const BlockIQ4_NL* x = static_cast<const BlockIQ4_NL*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK4_NL; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQK4_NL; ++j) isum += kIQ4NLValues[iq4_index(x[b].qs, j)] * y[b].qs[j];
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

void dequantize_iq4_xs(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(iq4_xs_scale(x[b], ib));
      for (int j = 0; j < 32; ++j) {
        y[b * kQK_K + 32 * ib + j] = dl * static_cast<float>(kIQ4NLValues[iq4_index(x[b].qs + 16 * ib, j)]);
      }
    }
  }
}

void quantize_iq4_xs(const float* x, void* y, int64_t n) { quantize_iq4_xs_row(x, y, n, nullptr); }

void quantize_rows_iq4_xs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::IQ4_XS, quantize_iq4_xs, quantize_iq4_xs_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_iq4_xs_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0;  // sum_ib (ls_ib - 32) * sum_j table[q_j] * y_j
    for (int ib = 0; ib < 8; ++ib) {
      int32_t sub = 0;
      for (int j = 0; j < 32; ++j) sub += kIQ4NLValues[iq4_index(x[b].qs + 16 * ib, j)] * y[b].qs[32 * ib + j];
      isum += iq4_xs_scale(x[b], ib) * sub;
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = sum;
}

}  // namespace ox::quant
