// AVX2 (F16C) quantize_row[F16]: f32 rows to fp16, what an F16 KV cache stores for every key and
// value and what attention converts queries to. Reference: ox::f32_to_fp16 (core/quant/fp16.cpp),
// byte for byte: vcvtps2ph rounds to nearest even, overflows to infinity and keeps a NaN's sign and
// top payload bits with the quiet bit set, as the reference does.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {

void quantize_row_f16(const float* x, void* vy, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(vy);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  for (; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

}  // namespace ox::kernels::avx2
