// AVX2 dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K. Both sum t * a with the
// codes t in 0..2 (TQ2_0: 0..3) as unsigned bytes, then take sum(a) off (the weights are t - 1),
// read from the activations' bsums. Reference: quant_traits(TQ1_0 / TQ2_0).vec_dot_ref, bit for
// bit: each block's integer sum is reduced to one int and its float term added in block order, as
// the reference does (one horizontal sum per 256 elements costs little, and a model then gives the
// same logits on every ISA).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// Trit k of each TQ1_0 byte (0..2; core/quant/tq.cpp): the top of 3 * (byte * 3^k mod 256) / 256.
// AVX2 has no byte multiply, so each byte moves to the high half of its own u16 lane: there the
// 16-bit product by 3^k wraps exactly as the byte product would, and mulhi by 3 is the division.
// pow3 holds 3^k per u16 lane (both bytes of a lane share it).
inline __m256i trits(__m256i bytes, __m256i pow3) {
  const __m256i three = _mm256_set1_epi16(3);
  const __m256i even = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_slli_epi16(bytes, 8), pow3), three);
  const __m256i odd = _mm256_mulhi_epu16(
      _mm256_mullo_epi16(_mm256_and_si256(bytes, _mm256_set1_epi16(static_cast<int16_t>(0xFF00))), pow3), three);
  return _mm256_or_si256(even, _mm256_slli_epi16(odd, 8));
}

inline __m256i pow3_lanes(int16_t low_lane, int16_t high_lane) {
  return _mm256_setr_m128i(_mm_set1_epi16(low_lane), _mm_set1_epi16(high_lane));
}

// sum(a) of a Q8_K block as 8 i32 partial sums.
inline __m256i activation_sums(const BlockQ8_K& y) { return sum_pairs_i16(load256(y.bsums)); }

}  // namespace

void vec_dot_tq1_0_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ1_0* x = static_cast<const BlockTQ1_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i pow3_01 = pow3_lanes(1, 3), pow3_23 = pow3_lanes(9, 27);
  // qh's bytes m = 0..3 repeat over the high lane; byte 4k + m there is element 240 + 4k + m, trit k.
  const __m256i pow3_4_qh = _mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27);
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    const int8_t* a = y[i].qs;
    // Bytes 0..31: trit k is element 32k + m. Each maddubs lane pair is at most 2 * 2 * 127, so the
    // eight i16 sums below stay under 2^15.
    const __m256i q0 = load256(x[i].qs);
    __m256i sum16 = _mm256_setzero_si256();
    for (int k = 0; k < 5; ++k) {
      static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
      sum16 = _mm256_add_epi16(sum16, mul_u8s8(trits(q0, _mm256_set1_epi16(kPow3[k])), load256(a + 32 * k)));
    }
    // Bytes 32..47 (element 160 + 16k + m) in both lanes: trits 0 | 1, then 2 | 3, then 4 beside qh.
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, 4);
    const __m256i q1 = _mm256_broadcastsi128_si256(load128(x[i].qs + 32));
    const __m256i q1_qh = _mm256_setr_m128i(load128(x[i].qs + 32), _mm_set1_epi32(static_cast<int>(qh)));
    sum16 = _mm256_add_epi16(sum16, mul_u8s8(trits(q1, pow3_01), load256(a + 160)));
    sum16 = _mm256_add_epi16(sum16, mul_u8s8(trits(q1, pow3_23), load256(a + 192)));
    sum16 = _mm256_add_epi16(sum16, mul_u8s8(trits(q1_qh, pow3_4_qh), load256(a + 224)));
    const __m256i sumi = _mm256_sub_epi32(sum_pairs_i16(sum16), activation_sums(y[i]));  // sum (t - 1) * a
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(sumi));
  }
  *s = sum;
}

void vec_dot_tq2_0_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ2_0* x = static_cast<const BlockTQ2_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m2 = _mm256_set1_epi8(3);
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    // qs[32j + m] holds elements 128j + 32l + m at bits 2l..2l+1: each shift gives 32 consecutive.
    // maddubs pairs are at most 2 * 3 * 127; eight of them fit i16.
    __m256i sum16 = _mm256_setzero_si256();
    for (int j = 0; j < 2; ++j) {
      const __m256i q = load256(x[i].qs + 32 * j);
      const int8_t* a = y[i].qs + 128 * j;
      sum16 = _mm256_add_epi16(sum16, mul_u8s8(_mm256_and_si256(q, m2), load256(a)));
      sum16 = _mm256_add_epi16(sum16, mul_u8s8(_mm256_and_si256(_mm256_srli_epi16(q, 2), m2), load256(a + 32)));
      sum16 = _mm256_add_epi16(sum16, mul_u8s8(_mm256_and_si256(_mm256_srli_epi16(q, 4), m2), load256(a + 64)));
      sum16 = _mm256_add_epi16(sum16, mul_u8s8(_mm256_and_si256(_mm256_srli_epi16(q, 6), m2), load256(a + 96)));
    }
    const __m256i sumi = _mm256_sub_epi32(sum_pairs_i16(sum16), activation_sums(y[i]));  // sum (q - 1) * a
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(sumi));
  }
  *s = sum;
}

}  // namespace ox::kernels::avx2
