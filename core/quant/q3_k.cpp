// Scalar reference of Q3_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * (q - 4) with
// q = 2 low bits (qs, laid out like Q2_K) + 1 high bit (bit i/32 of hmask[i%32]; set means +4),
// and 16 signed 6-bit scales packed in 12 bytes: low nibbles in bytes 0..7 (scales 0..7 low,
// 8..15 high nibble), the top 2 bits of scale j in bits 2*(j/4) of byte 8 + j%4.
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

// Signed level in -4..3 of element i.
int q3_value(const BlockQ3_K& b, int i) {
  const int h = i / 128, s = (i % 128) / 32, l = i % 32;
  const int low = (b.qs[32 * h + l] >> (2 * s)) & 3;
  const int high = (b.hmask[l] >> (i / 32)) & 1;
  return low - (high ? 0 : 4);
}

}  // namespace

void unpack_q3_k_scales(const uint8_t* packed, int8_t out[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

void dequantize_q3_k(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    int8_t sc[16];
    unpack_q3_k_scales(x[b].scales, sc);
    for (int i = 0; i < kQK_K; ++i) {
      y[b * kQK_K + i] = d * static_cast<float>(sc[i / 16]) * static_cast<float>(q3_value(x[b], i));
    }
  }
}

namespace {

// Packs the 16 stored scales (l = scale + 32, 0..63) into the 12-byte field.
void pack_q3_k_scales(const uint8_t* l, uint8_t* packed) {
  for (int k = 0; k < 12; ++k) packed[k] = 0;
  for (int j = 0; j < 16; ++j) {
    if (j < 8) packed[j] = static_cast<uint8_t>(l[j] & 0xF);
    else packed[j - 8] |= static_cast<uint8_t>((l[j] & 0xF) << 4);
    packed[8 + j % 4] |= static_cast<uint8_t>((l[j] >> 4) << (2 * (j / 4)));
  }
}

// Re-picks the levels against the scales as stored (d and the scales already in `out`) and packs
// them: the last steps of both quantizers.
void store_q3_k(const float* xb, BlockQ3_K& out, uint8_t* L) {
  const float d = fp16_to_f32(out.d);
  int8_t sc[16];
  unpack_q3_k_scales(out.scales, sc);
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(sc[j]);
    if (dl == 0.0f) continue;
    for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<uint8_t>(round_clamp(xb[16 * j + l] / dl, -4, 3) + 4);
  }
  for (int i = 0; i < kQK_K / 8; ++i) out.hmask[i] = 0;
  for (int i = 0; i < kQK_K / 4; ++i) out.qs[i] = 0;
  for (int i = 0; i < kQK_K; ++i) {
    const int h = i / 128, s = (i % 128) / 32, l = i % 32;
    if (L[i] > 3) out.hmask[l] |= static_cast<uint8_t>(1 << (i / 32));
    out.qs[32 * h + l] |= static_cast<uint8_t>((L[i] & 3) << (2 * s));
  }
}

// The plain fit of one super-block (values xn = x * 2^-e): each sub-block's symmetric fit refined
// level by level, then the 16 scales quantized to 6 signed bits against the largest.
void fit_q3_k_plain(const float* xn, int e, BlockQ3_K& out, uint8_t* L) {
  float scales[16];
  float max_scale = 0.0f, amax_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = fit_symmetric_refined(16, 4, xn + 16 * j, L + 16 * j);
    if (std::fabs(scales[j]) > amax_scale) {
      amax_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (!(amax_scale > 0.0f)) {
    for (int k = 0; k < 12; ++k) out.scales[k] = 0;
    out.d = 0;
    return;
  }
  // The sub-block scale of largest magnitude maps to -32, the signed range's wide end.
  const float iscale = -32.0f / max_scale;
  uint8_t l[16];
  for (int j = 0; j < 16; ++j) l[j] = static_cast<uint8_t>(round_clamp(iscale * scales[j], -32, 31) + 32);
  pack_q3_k_scales(l, out.scales);
  out.d = fp16_saturate(std::ldexp(1.0f / iscale, e));
}

// The fit under importance (llama.cpp's quantize_row_q3_K_impl): each sub-block's symmetric fit
// weighted by importance * sqrt(sigma2 + x^2), then the 16 scales fitted to 6 signed bits,
// weighted by their sub-block's total weight.
void fit_q3_k_weighted(const float* xn, int e, const float* importance, BlockQ3_K& out, uint8_t* L) {
  const float sigma2 = 2.0f * sum_squares(xn, kQK_K) / static_cast<float>(kQK_K);
  uint8_t Ls[16];
  float scales[16], sw[16], w[16];
  for (int j = 0; j < 16; ++j) {
    importance_weights(xn + 16 * j, importance + 16 * j, sigma2, 16, w);
    sw[j] = 0.0f;
    for (int l = 0; l < 16; ++l) sw[j] += w[l];
    scales[j] = fit_symmetric(16, 4, xn + 16 * j, w, L + 16 * j);
  }
  const float d = fit_symmetric(16, 32, scales, sw, Ls);
  pack_q3_k_scales(Ls, out.scales);
  out.d = fp16_saturate(std::ldexp(d, e));
}

// One row, plain (importance null) or under importance.
void quantize_q3_k_row(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK_K == 0);
  BlockQ3_K* y = static_cast<BlockQ3_K*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    const int e = group_exponent(xb, kQK_K);
    float xn[kQK_K];
    uint8_t L[kQK_K];
    scale_pow2(xb, xn, kQK_K, e);
    if (importance != nullptr) {
      fit_q3_k_weighted(xn, e, importance + b * kQK_K, y[b], L);
    } else {
      fit_q3_k_plain(xn, e, y[b], L);
    }
    store_q3_k(xb, y[b], L);
  }
}

}  // namespace

void quantize_q3_k(const float* x, void* y, int64_t n) { quantize_q3_k_row(x, y, n, nullptr); }

void quantize_rows_q3_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q3_K, quantize_q3_k, quantize_q3_k_row, x, y, n_rows, n_per_row, importance);
}

void vec_dot_q3_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t sc[16];
    unpack_q3_k_scales(x[b].scales, sc);
    int32_t isum = 0;  // sum_j sc_j * sum_{i in j} (q_i - 4) * y_i
    for (int j = 0; j < 16; ++j) {
      int32_t sub = 0;
      for (int l = 0; l < 16; ++l) sub += q3_value(x[b], 16 * j + l) * y[b].qs[16 * j + l];
      isum += sc[j] * sub;
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = sum;
}

}  // namespace ox::quant
