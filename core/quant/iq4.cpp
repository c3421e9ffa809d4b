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

// Error weights without an importance matrix: x^2 (large weights matter most).
void square_weights(const float* x, float* w, int n) {
  for (int j = 0; j < n; ++j) w[j] = x[j] * x[j];
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

void quantize_iq4_nl(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK4_NL == 0);
  BlockIQ4_NL* y = static_cast<BlockIQ4_NL*>(vy);
  for (int64_t b = 0; b < n / kQK4_NL; ++b) {
    const float* xb = x + b * kQK4_NL;
    const int e = group_exponent(xb, kQK4_NL);
    float xn[kQK4_NL], w[kQK4_NL];
    uint8_t idx[kQK4_NL];
    scale_pow2(xb, xn, kQK4_NL, e);
    square_weights(xn, w, kQK4_NL);
    const float d = fit_nonlinear(kQK4_NL, kIQ4NLValues, xn, w, idx, 7);
    y[b].d = fp16_saturate(std::ldexp(d, e));
    pack_iq4(idx, y[b].qs);
  }
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

void quantize_iq4_xs(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  BlockIQ4_XS* y = static_cast<BlockIQ4_XS*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    BlockIQ4_XS& out = y[b];
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K], w[kQK_K], scales[8];
    uint8_t idx[kQK_K];
    scale_pow2(xb, xn, kQK_K, e);
    square_weights(xn, w, kQK_K);
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < 8; ++ib) {
      scales[ib] = fit_nonlinear(32, kIQ4NLValues, xn + 32 * ib, w + 32 * ib, idx + 32 * ib, 7);
      if (std::fabs(scales[ib]) > amax_scale) {
        amax_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    // Sub-block scales become 6-bit signed integers (stored +32) times d; the largest maps to -32.
    out.d = fp16_saturate(std::ldexp(-max_scale / 32.0f, e));
    const float d = fp16_to_f32(out.d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out.scales_h = 0;
    for (int k = 0; k < 4; ++k) out.scales_l[k] = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int l = round_clamp(id * std::ldexp(scales[ib], e), -32, 31);
      const int stored = l + 32;
      out.scales_l[ib / 2] |= static_cast<uint8_t>((stored & 0xF) << (4 * (ib % 2)));
      out.scales_h |= static_cast<uint16_t>((stored >> 4) << (2 * ib));
      // Re-pick the indices against the sub-block scale as stored.
      const float dl = d * static_cast<float>(l);
      if (dl != 0.0f) {
        const float idl = 1.0f / dl;
        for (int j = 0; j < 32; ++j) idx[32 * ib + j] = static_cast<uint8_t>(nearest_level(kIQ4NLValues, idl * xb[32 * ib + j]));
      }
      pack_iq4(idx + 32 * ib, out.qs + 16 * ib);
    }
  }
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
