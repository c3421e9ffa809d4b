// AVX-512 dot products of the float formats (F32, F16, BF16); tails use masked loads.
// Reference: quant_traits(F32/F16/BF16).vec_dot_ref; only the summation order differs.
// BF16 is widened exactly (shift into the top half of an f32) rather than through vdpbf16ps,
// which flushes subnormal inputs and results and so departs from the reference; decode reads
// 2 bytes per weight either way, so the wider arithmetic costs nothing measurable.
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

// Shared loop: `load(p, i, mask)` gives 16 floats of row p from element i (masked lanes read
// nothing and give 0). Four accumulators cover FMA latency.
template <typename T, typename Load>
inline float dot16(int64_t n, const T* x, const T* y, Load load) {
  const __mmask16 all = 0xFFFF;
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm512_fmadd_ps(load(x, i, all), load(y, i, all), acc0);
    acc1 = _mm512_fmadd_ps(load(x, i + 16, all), load(y, i + 16, all), acc1);
    acc2 = _mm512_fmadd_ps(load(x, i + 32, all), load(y, i + 32, all), acc2);
    acc3 = _mm512_fmadd_ps(load(x, i + 48, all), load(y, i + 48, all), acc3);
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(load(x, i, all), load(y, i, all), acc0);
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    acc1 = _mm512_fmadd_ps(load(x, i, tail), load(y, i, tail), acc1);
  }
  return hsum512(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

}  // namespace

template <>
void vec_dot<DType::F32>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = dot16(n, static_cast<const float*>(vx), static_cast<const float*>(vy),
             [](const float* p, int64_t i, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p + i); });
}

template <>
void vec_dot<DType::F16>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = dot16(
      n, static_cast<const uint16_t*>(vx), static_cast<const uint16_t*>(vy),
      [](const uint16_t* p, int64_t i, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p + i)); });
}

template <>
void vec_dot<DType::BF16>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = dot16(n, static_cast<const uint16_t*>(vx), static_cast<const uint16_t*>(vy),
             [](const uint16_t* p, int64_t i, __mmask16 m) {
               const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p + i));
               return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
             });
}

}  // namespace ox::kernels::avx512
