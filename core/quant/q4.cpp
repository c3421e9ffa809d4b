// Scalar references of Q4_0 (symmetric, x = d * (q - 8)) and Q4_1 (x = d * q + m), blocks of 32.
// The plain quantizers use the standard per-block formulas, the importance-weighted ones llama.cpp's
// searches (quantize_row_q4_0_impl, quantize_row_q4_1_impl); dot products take Q8_0 / Q8_1 activations.
#include <cfloat>
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {

void dequantize_q4_0(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK4_0 == 0);
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    const float d = fp16_to_f32(x[b].d);
    float* out = y + b * kQK4_0;
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      out[j] = d * ((x[b].qs[j] & 0xF) - 8);
      out[j + kQK4_0 / 2] = d * ((x[b].qs[j] >> 4) - 8);
    }
  }
}

void quantize_q4_0(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK4_0 == 0);
  BlockQ4_0* y = static_cast<BlockQ4_0*>(vy);
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    const float* xb = x + b * kQK4_0;
    // The element of largest magnitude maps exactly to level -8 (keeping its sign in d), so the
    // asymmetric range -8..7 is used where it matters most.
    float amax = 0.0f, vmax = 0.0f;
    for (int j = 0; j < kQK4_0; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        vmax = xb[j];
      }
    }
    const float d = vmax / -8.0f;
    const float id = std::fabs(d) >= FLT_MIN ? 1.0f / d : 0.0f;
    y[b].d = fp16_saturate(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int q0 = trunc_clamp(xb[j] * id + 8.5f, 0, 15);
      const int q1 = trunc_clamp(xb[j + kQK4_0 / 2] * id + 8.5f, 0, 15);
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

namespace {

// One row of Q4_0 / Q4_1 under importance (llama.cpp's quantize_row_q4_0_impl / q4_1_impl): each
// block's fit weighted by importance * sqrt(sigma2 + x^2), sigma2 the row's mean square; the
// levels kept as fitted.
void quantize_q4_0_weighted(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK4_0 == 0);
  BlockQ4_0* y = static_cast<BlockQ4_0*>(vy);
  fit_blocks_weighted(x, n, importance, 8, false, [&](int64_t b, float d, float, const uint8_t* L) {
    y[b].d = fp16_saturate(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) y[b].qs[j] = static_cast<uint8_t>(L[j] | (L[j + kQK4_0 / 2] << 4));
  });
}

void quantize_q4_1_weighted(const float* x, void* vy, int64_t n, const float* importance) {
  OX_CHECK(n % kQK4_1 == 0);
  BlockQ4_1* y = static_cast<BlockQ4_1*>(vy);
  fit_blocks_weighted(x, n, importance, 15, true, [&](int64_t b, float d, float m, const uint8_t* L) {
    y[b].d = fp16_saturate(d);
    y[b].m = fp16_saturate(m);
    for (int j = 0; j < kQK4_1 / 2; ++j) y[b].qs[j] = static_cast<uint8_t>(L[j] | (L[j + kQK4_1 / 2] << 4));
  });
}

}  // namespace

void quantize_rows_q4_0(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q4_0, quantize_q4_0, quantize_q4_0_weighted, x, y, n_rows, n_per_row, importance);
}

void quantize_rows_q4_1(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_split(DType::Q4_1, quantize_q4_1, quantize_q4_1_weighted, x, y, n_rows, n_per_row, importance);
}

void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK4_0 == 0);
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      isum += ((x[b].qs[j] & 0xF) - 8) * y[b].qs[j];
      isum += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + kQK4_0 / 2];
    }
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

void dequantize_q4_1(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK4_1 == 0);
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  for (int64_t b = 0; b < n / kQK4_1; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const float m = fp16_to_f32(x[b].m);
    float* out = y + b * kQK4_1;
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      out[j] = d * (x[b].qs[j] & 0xF) + m;
      out[j + kQK4_1 / 2] = d * (x[b].qs[j] >> 4) + m;
    }
  }
}

void quantize_q4_1(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK4_1 == 0);
  BlockQ4_1* y = static_cast<BlockQ4_1*>(vy);
  for (int64_t b = 0; b < n / kQK4_1; ++b) {
    const float* xb = x + b * kQK4_1;
    float vmin = FLT_MAX, vmax = -FLT_MAX;
    for (int j = 0; j < kQK4_1; ++j) {
      vmin = std::fmin(vmin, xb[j]);
      vmax = std::fmax(vmax, xb[j]);
    }
    const float d = (vmax - vmin) / 15.0f;
    const float id = d >= FLT_MIN && d <= FLT_MAX ? 1.0f / d : 0.0f;
    y[b].d = fp16_saturate(d);
    y[b].m = fp16_saturate(vmin);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const int q0 = trunc_clamp((xb[j] - vmin) * id + 0.5f, 0, 15);
      const int q1 = trunc_clamp((xb[j + kQK4_1 / 2] - vmin) * id + 0.5f, 0, 15);
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK4_1 == 0);
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK4_1; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      isum += (x[b].qs[j] & 0xF) * y[b].qs[j];
      isum += (x[b].qs[j] >> 4) * y[b].qs[j + kQK4_1 / 2];
    }
    // m * s folds the weight's offset in: sum_j m * (d_y * q_y[j]) = m * s.
    sum += (fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d)) * static_cast<float>(isum) +
           fp16_to_f32(x[b].m) * fp16_to_f32(y[b].s);
  }
  *s = sum;
}

}  // namespace ox::quant
