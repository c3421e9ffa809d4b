// AVX-512 VNNI dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL, MXFP4) against Q8_0 / Q8_1: two blocks per 512-bit vector, vpdpbusd for u8 x s8 sums.
// Reference: quant_traits(W).vec_dot_ref; integer block sums exact (for any activation byte),
// float accumulation order differs. An odd last block goes through the AVX2 kernel.
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

// sum_i (dx_i * dy_i) * isum_i over nb blocks; `pair(i)` gives the integer dots of blocks i
// (lanes 0-7) and i+1 (lanes 8-15). Eight blocks per step: their sixteen fp16 scales are
// converted together (avx2::scale8) and spread over lane halves by one permute per pair. An
// odd last block goes through `single`, the AVX2 kernel of the format, on that block alone.
template <typename Block, typename Act, typename Pair>
inline float sum_pairs(int64_t nb, Pair pair, VecDotFn single, const Block* x, const Act* y) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  const __m512i spread[4] = {lane_halves_index(0), lane_halves_index(2), lane_halves_index(4), lane_halves_index(6)};
  int64_t i = 0;
  for (; i + 7 < nb; i += 8) {
    const __m512 d = _mm512_castps256_ps512(avx2::scale8(x + i, y + i));
    acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair(i)), _mm512_permutexvar_ps(spread[0], d), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair(i + 2)), _mm512_permutexvar_ps(spread[1], d), acc1);
    acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair(i + 4)), _mm512_permutexvar_ps(spread[2], d), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair(i + 6)), _mm512_permutexvar_ps(spread[3], d), acc1);
  }
  for (; i + 1 < nb; i += 2) {
    acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair(i)), block_pair_scales(x + i, y + i), acc0);
  }
  float sum = hsum512(_mm512_add_ps(acc0, acc1));
  if (i < nb) {
    float tail = 0.0f;
    single(32, &tail, x + i, y + i);
    sum += tail;
  }
  return sum;
}

// The formats whose nibbles index a 16-entry codebook of signed bytes (IQ4_NL, MXFP4) against
// Q8_0: the table shifted by +128 is unsigned, so vpdpbusd applies; 128 * sum(a) comes off.
template <typename Block>
inline float codebook_dot(int64_t nb, const Block* x, const BlockQ8_0* y, const int8_t* values, VecDotFn single) {
  const __m512i table =
      _mm512_broadcast_i32x4(_mm_xor_si128(load128(values), _mm_set1_epi8(static_cast<char>(0x80))));
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  auto pair = [&](int64_t i) {
    const __m512i w = _mm512_shuffle_epi8(table, unpack_nibbles_x2(x[i].qs, x[i + 1].qs));
    const __m512i a = load_pair(y[i].qs, y[i + 1].qs);
    return _mm512_sub_epi32(dot_u8s8(w, a), dot_u8s8(bias, a));
  };
  return sum_pairs(nb, pair, single, x, y);
}

inline uint64_t qh_pair(const uint8_t* qh0, const uint8_t* qh1) {
  uint32_t a, b;
  std::memcpy(&a, qh0, 4);
  std::memcpy(&b, qh1, 4);
  return static_cast<uint64_t>(a) | (static_cast<uint64_t>(b) << 32);
}

}  // namespace

template <>
void vec_dot<DType::Q4_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK4_0;
  const __m512i eight = _mm512_set1_epi8(8);
  auto pair = [&](int64_t i) {
    const __m512i w = unpack_nibbles_x2(x[i].qs, x[i + 1].qs);
    const __m512i a = load_pair(y[i].qs, y[i + 1].qs);
    return _mm512_sub_epi32(dot_u8s8(w, a), dot_u8s8(eight, a));  // (w - 8) . a
  };
  *s = sum_pairs(nb, pair, avx2::vec_dot<DType::Q4_0>, x, y);
}

template <>
void vec_dot<DType::Q4_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK4_1;
  // m * s terms (see the AVX2 kernel); the odd tail block's come with its AVX2 call.
  const float sum_m = avx2::sum_min_terms(nb - (nb & 1), x, y);
  auto pair = [&](int64_t i) {
    const __m512i w = unpack_nibbles_x2(x[i].qs, x[i + 1].qs);
    return dot_u8s8(w, load_pair(y[i].qs, y[i + 1].qs));
  };
  *s = sum_m + sum_pairs(nb, pair, avx2::vec_dot<DType::Q4_1>, x, y);
}

template <>
void vec_dot<DType::Q5_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK5_0;
  const __m512i sixteen = _mm512_set1_epi8(16);
  auto pair = [&](int64_t i) {
    // Bit e of the 64-bit mask = 5th bit of element e of the pair, exactly the byte order of w.
    const __mmask64 high = qh_pair(x[i].qh, x[i + 1].qh);
    __m512i w = unpack_nibbles_x2(x[i].qs, x[i + 1].qs);
    w = _mm512_mask_add_epi8(w, high, w, sixteen);
    const __m512i a = load_pair(y[i].qs, y[i + 1].qs);
    return _mm512_sub_epi32(dot_u8s8(w, a), dot_u8s8(sixteen, a));  // (w - 16) . a
  };
  *s = sum_pairs(nb, pair, avx2::vec_dot<DType::Q5_0>, x, y);
}

template <>
void vec_dot<DType::Q5_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK5_1;
  const __m512i sixteen = _mm512_set1_epi8(16);
  const float sum_m = avx2::sum_min_terms(nb - (nb & 1), x, y);
  auto pair = [&](int64_t i) {
    const __mmask64 high = qh_pair(x[i].qh, x[i + 1].qh);
    __m512i w = unpack_nibbles_x2(x[i].qs, x[i + 1].qs);
    w = _mm512_mask_add_epi8(w, high, w, sixteen);
    return dot_u8s8(w, load_pair(y[i].qs, y[i + 1].qs));
  };
  *s = sum_m + sum_pairs(nb, pair, avx2::vec_dot<DType::Q5_1>, x, y);
}

template <>
void vec_dot<DType::Q8_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK8_0;
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  auto pair = [&](int64_t i) {
    // x ^ 0x80 = x + 128 as u8: (x + 128) . a - 128 * sum(a), exact for every byte value.
    const __m512i w = _mm512_xor_si512(load_pair(x[i].qs, x[i + 1].qs), bias);
    const __m512i a = load_pair(y[i].qs, y[i + 1].qs);
    return _mm512_sub_epi32(dot_u8s8(w, a), dot_u8s8(bias, a));
  };
  *s = sum_pairs(nb, pair, avx2::vec_dot<DType::Q8_0>, x, y);
}

template <>
void vec_dot<DType::IQ4_NL>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_dot(n / kQK4_NL, static_cast<const BlockIQ4_NL*>(vx), static_cast<const BlockQ8_0*>(vy),
                    kIQ4NLValues, avx2::vec_dot<DType::IQ4_NL>);
}

template <>
void vec_dot<DType::MXFP4>(int64_t n, float* s, const void* vx, const void* vy) {
  *s = codebook_dot(n / kQKMXFP4, static_cast<const BlockMXFP4*>(vx), static_cast<const BlockQ8_0*>(vy),
                    kMXFP4Values, avx2::vec_dot<DType::MXFP4>);
}

}  // namespace ox::kernels::avx512
