// AVX2 dot products of the float formats: F32 x F32, F16 x F16, BF16 x BF16.
// Reference: quant_traits(F32/F16/BF16).vec_dot_ref. Products are exact for F16/BF16 (11- and
// 8-bit significands); only the summation order differs (4 x 8 lanes, then a tree).
#include <cstring>

#include "core/quant/traits.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// 8 bf16 values -> 8 floats: a bf16 is the top half of an f32.
inline __m256 load_bf16(const uint16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p)), 16));
}

inline float bf16_scalar(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

template <>
void vec_dot<DType::F32>(int64_t n, float* s, const void* vx, const void* vy) {
  const float* x = static_cast<const float*>(vx);
  const float* y = static_cast<const float*>(vy);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += x[i] * y[i];
  *s = sum;
}

template <>
void vec_dot<DType::F16>(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(load128(x + i)), _mm256_cvtph_ps(load128(y + i)), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_cvtph_ps(load128(x + i + 8)), _mm256_cvtph_ps(load128(y + i + 8)), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_cvtph_ps(load128(x + i + 16)), _mm256_cvtph_ps(load128(y + i + 16)), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_cvtph_ps(load128(x + i + 24)), _mm256_cvtph_ps(load128(y + i + 24)), acc3);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(load128(x + i)), _mm256_cvtph_ps(load128(y + i)), acc0);
  }
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += fp16(x[i]) * fp16(y[i]);
  *s = sum;
}

template <>
void vec_dot<DType::BF16>(int64_t n, float* s, const void* vx, const void* vy) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  const uint16_t* y = static_cast<const uint16_t*>(vy);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(load_bf16(x + i), load_bf16(y + i), acc0);
    acc1 = _mm256_fmadd_ps(load_bf16(x + i + 8), load_bf16(y + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(load_bf16(x + i + 16), load_bf16(y + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(load_bf16(x + i + 24), load_bf16(y + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(load_bf16(x + i), load_bf16(y + i), acc0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += bf16_scalar(x[i]) * bf16_scalar(y[i]);
  *s = sum;
}


void to_float_f16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(load128(x + i)));
  for (; i < n; ++i) y[i] = fp16(x[i]);
}

void to_float_bf16(const void* vx, float* y, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(vx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load_bf16(x + i));
  for (; i < n; ++i) y[i] = bf16_scalar(x[i]);
}

}  // namespace ox::kernels::avx2
