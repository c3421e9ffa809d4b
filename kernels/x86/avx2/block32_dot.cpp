// AVX2 dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL,
// MXFP4) against their Q8_0 / Q8_1 activations.
// Reference: quant_traits(W).vec_dot_ref. Integer block sums are exact; the float
// accumulation (8 lanes x 2 accumulators, FMA) differs from the scalar order only by rounding.
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// sum_i (dx_i * dy_i) * isum(i) over nb blocks, `isum(i)` giving block i's integer dot as 8
// i32 partial sums. Eight blocks per step: their sixteen fp16 scales are converted together
// (per-block scalar conversion cost as much as the dot itself) and parked on the stack, so
// each block's broadcast is a plain load; two accumulators overlap the FMA latency.
template <typename Block, typename Act, typename ISum>
inline float sum_blocks(int64_t nb, const Block* x, const Act* y, ISum isum) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  alignas(32) float d[8];
  int64_t i = 0;
  for (; i + 7 < nb; i += 8) {
    _mm256_store_ps(d, scale8(x + i, y + i));
    for (int b = 0; b < 8; b += 2) {
      acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum(i + b)), _mm256_broadcast_ss(&d[b]), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum(i + b + 1)), _mm256_broadcast_ss(&d[b + 1]), acc1);
    }
  }
  for (; i < nb; ++i) {
    acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum(i)), _mm256_set1_ps(block_scale(x[i], y[i])), acc0);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

// The formats whose nibbles index a 16-entry codebook of signed bytes (IQ4_NL, MXFP4) against Q8_0.
template <typename Block>
inline float codebook_dot(int64_t nb, const Block* x, const BlockQ8_0* y, const int8_t* values) {
  const __m256i table = _mm256_broadcastsi128_si256(load128(values));
  return sum_blocks(nb, x, y, [&](int64_t i) {
    const __m256i w = _mm256_shuffle_epi8(table, unpack_nibbles(x[i].qs));
    return sum_pairs_i16(mul_s8s8(w, load256(y[i].qs)));
  });
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

template <>
void vec_dot<DType::Q4_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const __m256i eight = _mm256_set1_epi8(8);
  *s = sum_blocks(n / kQK4_0, x, y, [&](int64_t i) {
    const __m256i w = unpack_nibbles(x[i].qs);  // 0..15
    const __m256i a = load256(y[i].qs);
    // sum (w - 8) * a = sum w*a - sum 8*a, both pair sums within i16 for any activation byte.
    return sum_pairs_i16(_mm256_sub_epi16(mul_u8s8(w, a), mul_u8s8(eight, a)));
  });
}

template <>
void vec_dot<DType::Q4_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK4_1;
  // x = d*q + m, so dot = d*dy*sum(q*a) + m*s where s = dy*sum(a) is stored in the Q8_1 block.
  *s = sum_min_terms(nb, x, y) + sum_blocks(nb, x, y, [&](int64_t i) {
         return sum_pairs_i16(mul_u8s8(unpack_nibbles(x[i].qs), load256(y[i].qs)));
       });
}

template <>
void vec_dot<DType::Q5_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const __m256i sixteen = _mm256_set1_epi8(16);
  *s = sum_blocks(n / kQK5_0, x, y, [&](int64_t i) {
    const __m256i hi = _mm256_and_si256(expand_bits(load_u32(x[i].qh)), sixteen);
    const __m256i w = _mm256_or_si256(unpack_nibbles(x[i].qs), hi);  // 0..31
    const __m256i a = load256(y[i].qs);
    return sum_pairs_i16(_mm256_sub_epi16(mul_u8s8(w, a), mul_u8s8(sixteen, a)));  // (w - 16) * a
  });
}

template <>
void vec_dot<DType::Q5_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK5_1;
  const __m256i sixteen = _mm256_set1_epi8(16);
  *s = sum_min_terms(nb, x, y) + sum_blocks(nb, x, y, [&](int64_t i) {
         const __m256i hi = _mm256_and_si256(expand_bits(load_u32(x[i].qh)), sixteen);
         const __m256i w = _mm256_or_si256(unpack_nibbles(x[i].qs), hi);
         return sum_pairs_i16(mul_u8s8(w, load256(y[i].qs)));
       });
}

template <>
void vec_dot<DType::Q8_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = sum_blocks(n / kQK8_0, x, y,
                  [&](int64_t i) { return sum_pairs_i16(mul_s8s8(load256(x[i].qs), load256(y[i].qs))); });
}

template <>
void vec_dot<DType::IQ4_NL>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_dot(n / kQK4_NL, static_cast<const BlockIQ4_NL*>(vx), static_cast<const BlockQ8_0*>(vy), kIQ4NLValues);
}

template <>
void vec_dot<DType::MXFP4>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_dot(n / kQKMXFP4, static_cast<const BlockMXFP4*>(vx), static_cast<const BlockQ8_0*>(vy), kMXFP4Values);
}

}  // namespace ox::kernels::avx2
