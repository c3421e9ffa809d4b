// Scalar reference of Q2_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * q - dmin * m
// with 2-bit q and 4-bit (sc, m) per sub-block. Element 128*h + 32*s + l lives in bits 2s..2s+1
// of qs[32*h + l]; sub-block index = element / 16.
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

int q2_value(const BlockQ2_K& b, int i) {
  const int h = i / 128, s = (i % 128) / 32, l = i % 32;
  return (b.qs[32 * h + l] >> (2 * s)) & 3;
}

}  // namespace

void dequantize_q2_k(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const float dmin = fp16_to_f32(x[b].dmin);
    for (int i = 0; i < kQK_K; ++i) {
      const uint8_t sc = x[b].scales[i / 16];
      y[b * kQK_K + i] = d * static_cast<float>(sc & 0xF) * static_cast<float>(q2_value(x[b], i)) -
                         dmin * static_cast<float>(sc >> 4);
    }
  }
}

namespace {

// Re-picks the levels against the scales as stored (d, dmin, 4-bit sc / m already in `out`) and
// packs them: the last steps of both quantizers.
void store_q2_k(const float* xb, BlockQ2_K& out, uint8_t* L) {
  const float d = fp16_to_f32(out.d), dmin = fp16_to_f32(out.dmin);
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(out.scales[j] & 0xF);
    if (dl == 0.0f) continue;  // keep the search's levels; they multiply a zero scale
    const float ml = dmin * static_cast<float>(out.scales[j] >> 4);
    for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<uint8_t>(round_clamp((xb[16 * j + l] + ml) / dl, 0, 3));
  }
  for (int i = 0; i < kQK_K / 4; ++i) out.qs[i] = 0;
  for (int i = 0; i < kQK_K; ++i) {
    const int h = i / 128, s = (i % 128) / 32, l = i % 32;
    out.qs[32 * h + l] |= static_cast<uint8_t>(L[i] << (2 * s));
  }
}

// The plain fit of one super-block (values xn = x * 2^-e): each sub-block's scale/min search
// weighted by |x| with absolute error (with only 4 levels, the large elements decide the fit), then
// scales and mins quantized to 4 bits against the largest of each.
void fit_q2_k_plain(const float* xn, int e, BlockQ2_K& out, uint8_t* L) {
  float scales[16], mins[16], w[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) w[l] = std::fabs(xn[16 * j + l]);
    scales[j] = fit_scale_min(16, 3, xn + 16 * j, w, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
    max_scale = std::fmax(max_scale, scales[j]);
    max_min = std::fmax(max_min, mins[j]);
  }
  const float iscale = max_scale > 0.0f ? 15.0f / max_scale : 0.0f;
  const float imin = max_min > 0.0f ? 15.0f / max_min : 0.0f;
  for (int j = 0; j < 16; ++j) {
    const int ls = round_clamp(iscale * scales[j], 0, 15);
    const int lm = round_clamp(imin * mins[j], 0, 15);
    out.scales[j] = static_cast<uint8_t>(ls | (lm << 4));
  }
  out.d = fp16_saturate(std::ldexp(max_scale / 15.0f, e));
  out.dmin = fp16_saturate(std::ldexp(max_min / 15.0f, e));
}

// The fit under importance (llama.cpp's quantize_row_q2_K_impl): each sub-block's search weighted
// by importance * sqrt(sigma2 + x^2), then the 16 scales and the 16 mins fitted to 4 bits each,
// weighted by their sub-block's total weight.
void fit_q2_k_weighted(const float* xn, int e, const float* importance, BlockQ2_K& out, uint8_t* L) {
  const float sigma2 = sum_squares(xn, kQK_K) / static_cast<float>(kQK_K);
  uint8_t Ls[16], Lm[16];
  float scales[16], mins[16], sw[16], w[16];
  for (int j = 0; j < 16; ++j) {
    importance_weights(xn + 16 * j, importance + 16 * j, sigma2, 16, w);
    sw[j] = 0.0f;
    for (int l = 0; l < 16; ++l) sw[j] += w[l];
    scales[j] = fit_scale_min(16, 3, xn + 16 * j, w, L + 16 * j, &mins[j], -0.9f, 0.05f, 36, false);
  }
  out.d = fp16_saturate(std::ldexp(fit_unsigned(16, 15, scales, sw, Ls), e));
  out.dmin = fp16_saturate(std::ldexp(fit_unsigned(16, 15, mins, sw, Lm), e));
  for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
}

// One row, plain (importance null) or under importance.
void quantize_q2_k_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK_K == 0);
  BlockQ2_K* y = static_cast<BlockQ2_K*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K];
    uint8_t L[kQK_K];
    scale_pow2(xb, xn, kQK_K, e);
    if (importance != nullptr) {
      fit_q2_k_weighted(xn, e, importance + b * kQK_K, y[b], L);
    } else {
      fit_q2_k_plain(xn, e, y[b], L);
    }
    store_q2_k(xb, y[b], L);
  }
}

}  // namespace

void quantize_q2_k(const float* x, void* y, int64_t n) { quantize_q2_k_row(x, y, n, nullptr); }

void quantize_rows_q2_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q2_K, quantize_q2_k, quantize_q2_k_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_q2_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    // isum = sum_j sc_j * sum_{i in j} q_i * y_i; msum = sum_j m_j * bsums_j (the min term).
    int32_t isum = 0, msum = 0;
    for (int j = 0; j < 16; ++j) {
      int32_t sub = 0;
      for (int l = 0; l < 16; ++l) sub += q2_value(x[b], 16 * j + l) * y[b].qs[16 * j + l];
      isum += (x[b].scales[j] & 0xF) * sub;
      msum += (x[b].scales[j] >> 4) * y[b].bsums[j];
    }
    const float dall = y[b].d * fp16_to_f32(x[b].d);
    const float dmin = y[b].d * fp16_to_f32(x[b].dmin);
    sum += dall * static_cast<float>(isum) - dmin * static_cast<float>(msum);
  }
  *s = sum;
}

}  // namespace ox::quant
