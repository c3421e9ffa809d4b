// Scalar references of Q5_0 (x = d * (q - 16)) and Q5_1 (x = d * q + m), blocks of 32: the low
// 4 bits of element j sit in qs like Q4_0's, the 5th bit in bit j of the little-endian u32 qh.
#include <cfloat>
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

uint32_t load_qh(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) |
         (static_cast<uint32_t>(qh[2]) << 16) | (static_cast<uint32_t>(qh[3]) << 24);
}

void store_qh(uint32_t v, uint8_t* qh) {
  for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(v >> (8 * k));
}

// Element j's 5-bit quant (0..31) of a Q5 block.
int q5_value(const uint8_t* qs, uint32_t qh, int j) {
  const int low = j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
  return low | static_cast<int>(((qh >> j) & 1) << 4);
}

// Packs 32 quants in 0..31 into qs / qh.
template <typename Level>
void pack_q5(const Level* q, uint8_t* qs, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>(q[j] >> 4) << j;
  store_qh(h, qh);
}

// One row of Q5_0 / Q5_1 under importance, as Q4_0 / Q4_1's (q4.cpp) with 32 levels
// (llama.cpp's quantize_row_q5_0_impl, quantize_row_q5_1_impl).
void quantize_q5_0_weighted(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK5_0 == 0);
  BlockQ5_0* y = static_cast<BlockQ5_0*>(vy);
  fit_blocks_weighted(x, n, importance, 16, false, [&](int64_t b, float d, float, const uint8_t* L) {
    y[b].d = fp16_saturate(d);
    pack_q5(L, y[b].qs, y[b].qh);
  });
}

void quantize_q5_1_weighted(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK5_1 == 0);
  BlockQ5_1* y = static_cast<BlockQ5_1*>(vy);
  fit_blocks_weighted(x, n, importance, 31, true, [&](int64_t b, float d, float m, const uint8_t* L) {
    y[b].d = fp16_saturate(d);
    y[b].m = fp16_saturate(m);
    pack_q5(L, y[b].qs, y[b].qh);
  });
}

}  // namespace

void quantize_rows_q5_0(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q5_0, quantize_q5_0, quantize_q5_0_weighted, x, y, n_rows, n_per_row, importance);
}

void quantize_rows_q5_1(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q5_1, quantize_q5_1, quantize_q5_1_weighted, x, y, n_rows, n_per_row, importance);
}

void dequantize_q5_0(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK5_0 == 0);
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  for (int64_t b = 0; b < n / kQK5_0; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const uint32_t qh = load_qh(x[b].qh);
    for (int j = 0; j < kQK5_0; ++j) y[b * kQK5_0 + j] = d * (q5_value(x[b].qs, qh, j) - 16);
  }
}

void quantize_q5_0(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK5_0 == 0);
  BlockQ5_0* y = static_cast<BlockQ5_0*>(vy);
  for (int64_t b = 0; b < n / kQK5_0; ++b) {
    const float* xb = x + b * kQK5_0;
    float amax = 0.0f, vmax = 0.0f;  // the element of largest magnitude maps to level -16
    for (int j = 0; j < kQK5_0; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        vmax = xb[j];
      }
    }
    const float d = vmax / -16.0f;
    const float id = std::fabs(d) >= FLT_MIN ? 1.0f / d : 0.0f;
    int q[kQK5_0];
    for (int j = 0; j < kQK5_0; ++j) q[j] = trunc_clamp(xb[j] * id + 16.5f, 0, 31);
    y[b].d = fp16_saturate(d);
    pack_q5(q, y[b].qs, y[b].qh);
  }
}

void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK5_0 == 0);
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK5_0; ++b) {
    const uint32_t qh = load_qh(x[b].qh);
    int32_t isum = 0;
    for (int j = 0; j < kQK5_0; ++j) isum += (q5_value(x[b].qs, qh, j) - 16) * y[b].qs[j];
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

void dequantize_q5_1(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK5_1 == 0);
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  for (int64_t b = 0; b < n / kQK5_1; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const float m = fp16_to_f32(x[b].m);
    const uint32_t qh = load_qh(x[b].qh);
    for (int j = 0; j < kQK5_1; ++j) y[b * kQK5_1 + j] = d * q5_value(x[b].qs, qh, j) + m;
  }
}

void quantize_q5_1(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK5_1 == 0);
  BlockQ5_1* y = static_cast<BlockQ5_1*>(vy);
  for (int64_t b = 0; b < n / kQK5_1; ++b) {
    const float* xb = x + b * kQK5_1;
    float vmin = FLT_MAX, vmax = -FLT_MAX;
    for (int j = 0; j < kQK5_1; ++j) {
      vmin = std::fmin(vmin, xb[j]);
      vmax = std::fmax(vmax, xb[j]);
    }
    const float d = (vmax - vmin) / 31.0f;
    const float id = d >= FLT_MIN && d <= FLT_MAX ? 1.0f / d : 0.0f;
    int q[kQK5_1];
    for (int j = 0; j < kQK5_1; ++j) q[j] = trunc_clamp((xb[j] - vmin) * id + 0.5f, 0, 31);
    y[b].d = fp16_saturate(d);
    y[b].m = fp16_saturate(vmin);
    pack_q5(q, y[b].qs, y[b].qh);
  }
}

void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK5_1 == 0);
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK5_1; ++b) {
    const uint32_t qh = load_qh(x[b].qh);
    int32_t isum = 0;
    for (int j = 0; j < kQK5_1; ++j) isum += q5_value(x[b].qs, qh, j) * y[b].qs[j];
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum) +
           fp16_to_f32(x[b].m) * fp16_to_f32(y[b].s);
  }
  *s = sum;
}

}  // namespace ox::quant
