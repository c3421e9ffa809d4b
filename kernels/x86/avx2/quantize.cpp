// AVX2 activation quantizers Q8_0, Q8_1 (blocks of 32) and Q8_K (blocks of 256). They must write
// the same bytes as quant_traits(Q8_*).from_float_ref: same scale arithmetic in f32, rounding of
// x * id by cvtps (round half to even under the default MXCSR, as nearbyintf), fp16 scales
// through the same saturating ox::f32_to_fp16 (core/quant/q8.cpp is the recipe).
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/quant/blocks.h"
#include "core/quant/traits.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// max |x[i]| over 32 floats.
inline float amax32(const float* x) {
  const __m256 m01 = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x)), abs_ps(_mm256_loadu_ps(x + 8)));
  const __m256 m23 = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + 16)), abs_ps(_mm256_loadu_ps(x + 24)));
  return hmax(_mm256_max_ps(m01, m23));
}

// nearbyint(x * scale) clamped to [-127, 127] (the clamp only bites for Q8_K, where iscale * x
// may round to 128; a NaN converts to INT_MIN and clamps to -127 as the reference's fmax does).
inline __m256i round_clamp8(const float* x, __m256 scale) {
  const __m256i i = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), scale));
  return _mm256_max_epi32(_mm256_set1_epi32(-127), _mm256_min_epi32(i, _mm256_set1_epi32(127)));
}

// Rounds x[0..31] * scale to int8 and stores them in element order; returns their sum.
inline int32_t round_store32(const float* x, float scale, int8_t* out) {
  const __m256 m = _mm256_set1_ps(scale);
  const __m256i i0 = round_clamp8(x, m);
  const __m256i i1 = round_clamp8(x + 8, m);
  const __m256i i2 = round_clamp8(x + 16, m);
  const __m256i i3 = round_clamp8(x + 24, m);
  // packs work per 128-bit lane: the dwords come out as elements 0-3,8-11,16-19,24-27 | 4-7,...
  const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  const __m256i ordered = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), ordered);
  return hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
}

// Blocks of 32 (Q8_0; Q8_1 also keeps d * sum of its quants) or of 256 (Q8_K: an f32 scale and
// the sum of each 16 quants).
template <DType A>
void quantize_row(const float* x, void* vy, int64_t n) {
  if constexpr (A == DType::Q8_K) {
    BlockQ8_K* y = static_cast<BlockQ8_K*>(vy);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
      const float* xb = x + i * kQK_K;
      float amax = 0.0f;
      for (int j = 0; j < kQK_K; j += 32) amax = __builtin_fmaxf(amax, amax32(xb + j));
      if (amax < 127.0f * FLT_MIN) {  // iscale would overflow: the reference writes a zero block
        std::memset(&y[i], 0, sizeof(BlockQ8_K));
        continue;
      }
      const float iscale = 127.0f / amax;
      for (int j = 0; j < kQK_K; j += 32) round_store32(xb + j, iscale, y[i].qs + j);
      y[i].d = 1.0f / iscale;
      for (int g = 0; g < kQK_K / 16; ++g) {
        // 16 int8 -> i16 and a horizontal add; exact (|sum| <= 16 * 128).
        const __m256i v = _mm256_cvtepi8_epi16(load128(y[i].qs + 16 * g));
        y[i].bsums[g] = static_cast<int16_t>(hsum_i32(_mm256_madd_epi16(v, _mm256_set1_epi16(1))));
      }
    }
  } else {
    static_assert(A == DType::Q8_0 || A == DType::Q8_1);
    using Block = std::conditional_t<A == DType::Q8_0, BlockQ8_0, BlockQ8_1>;
    static_assert(kQK8_0 == 32 && kQK8_1 == 32);
    Block* y = static_cast<Block*>(vy);
    for (int64_t i = 0; i < n / 32; ++i) {
      const float d = amax32(x + i * 32) / 127.0f;
      const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;  // 1/d of a subnormal d would overflow
      y[i].d = fp16_saturate(d);
      const int32_t sum = round_store32(x + i * 32, id, y[i].qs);
      if constexpr (A == DType::Q8_1) {
        y[i].s = fp16_saturate(d * static_cast<float>(sum));  // unrounded d, as the reference
      }
    }
  }
}

}  // namespace

void register_quantizers(KernelTable& t) {
  t.quantize_row[static_cast<uint32_t>(DType::Q8_0)] = quantize_row<DType::Q8_0>;
  t.quantize_row[static_cast<uint32_t>(DType::Q8_1)] = quantize_row<DType::Q8_1>;
  t.quantize_row[static_cast<uint32_t>(DType::Q8_K)] = quantize_row<DType::Q8_K>;
}

}  // namespace ox::kernels::avx2
