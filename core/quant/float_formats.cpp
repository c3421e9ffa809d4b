// Scalar references of the plain float formats F32, F16, BF16: conversions and dot products.
// Dot products accumulate in one float, in index order (the reference order for SIMD tests).
#include <cstring>

#include "core/quant/reference.h"
#include "core/quant/traits.h"

namespace ox::quant {

void dequantize_f32(const void* x, float* y, int64_t n) {
  std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void quantize_f32(const float* x, void* y, int64_t n) {
  std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void vec_dot_f32_f32(int64_t n, float* s, const void* vx, const void* vy) {
  const float* x = static_cast<const float*>(vx);
  const float* y = static_cast<const float*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  *s = sum;
}

void dequantize_f16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_f32(x[i]);
}

void quantize_f16(const float* x, void* vy, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(vy);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

void vec_dot_f16_f16(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += fp16_to_f32(x[i]) * fp16_to_f32(y[i]);
  *s = sum;
}

void dequantize_bf16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(x[i]);
}

void quantize_bf16(const float* x, void* vy, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(vy);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

void vec_dot_bf16_bf16(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += bf16_to_f32(x[i]) * bf16_to_f32(y[i]);
  *s = sum;
}

}  // namespace ox::quant
