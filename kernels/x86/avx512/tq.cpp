// AVX-512 VNNI dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K: the codes as
// unsigned bytes (t in 0..2, TQ2_0's q in 0..3) through vpdpbusd, 64 elements per step, and
// sum(a) taken off once per block from the bsums (the weights are t - 1). Reference:
// quant_traits(TQ1_0 / TQ2_0).vec_dot_ref, bit for bit: one int per block, its float term added in
// block order (as avx2/tq.cpp).
#include "core/quant/blocks.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

// Trit k of each TQ1_0 byte, 3^k given per u16 lane: the byte in the high half of its u16 lane
// wraps modulo 256 under the 16-bit multiply, and mulhi by 3 takes the top (as avx2/tq.cpp).
inline __m512i trits(__m512i bytes, __m512i pow3) {
  const __m512i three = _mm512_set1_epi16(3);
  const __m512i even = _mm512_mulhi_epu16(_mm512_mullo_epi16(_mm512_slli_epi16(bytes, 8), pow3), three);
  const __m512i odd = _mm512_mulhi_epu16(
      _mm512_mullo_epi16(_mm512_and_si512(bytes, _mm512_set1_epi16(static_cast<int16_t>(0xFF00))), pow3), three);
  return _mm512_or_si512(even, _mm512_slli_epi16(odd, 8));
}

// u16 multipliers per 128-bit lane (8 words each).
inline __m512i pow3_lanes(__m128i l0, __m128i l1, __m128i l2, __m128i l3) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_m128i(l0, l1)), _mm256_setr_m128i(l2, l3), 1);
}

// -sum(a) of a Q8_K block in the low eight i32 lanes (the high ones zero: a cast would leave them
// undefined), the starting value of a block's sum.
inline __m512i minus_activation_sum(const BlockQ8_K& y) {
  const __m256i sums = _mm256_madd_epi16(load256(y.bsums), _mm256_set1_epi16(1));
  return _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), sums), 0);
}

inline int32_t hsum512_i32(__m512i v) {
  return avx2::hsum_i32(_mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)));
}

}  // namespace

template <>
void vec_dot<DType::TQ1_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ1_0* x = static_cast<const BlockTQ1_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  auto splat = [](int16_t v) { return _mm_set1_epi16(v); };
  // The four 64-element steps (core/quant/tq.cpp for the element order): qs[0..31] trits 0 | 1,
  // trits 2 | 3, then trit 4 | qs[32..47] trits 0, 1; then qs[32..47] trits 2, 3 | trit 4, qh.
  // qh's four bytes repeat over the last lane; its byte 4k + m there is element 240 + 4k + m, trit k.
  const __m512i pow[4] = {
      pow3_lanes(splat(1), splat(1), splat(3), splat(3)),
      pow3_lanes(splat(9), splat(9), splat(27), splat(27)),
      pow3_lanes(splat(81), splat(81), splat(1), splat(3)),
      pow3_lanes(splat(9), splat(27), splat(81), _mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27)),
  };
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i q0 = load256(x[i].qs);
    const __m128i q1 = load128(x[i].qs + 32);
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, 4);
    const __m512i v[4] = {
        _mm512_broadcast_i64x4(q0),
        _mm512_broadcast_i64x4(q0),
        _mm512_inserti64x4(_mm512_castsi256_si512(q0), _mm256_broadcastsi128_si256(q1), 1),
        _mm512_inserti32x4(_mm512_broadcast_i32x4(q1), _mm_set1_epi32(static_cast<int>(qh)), 3),
    };
    __m512i sumi = minus_activation_sum(y[i]);
    for (int step = 0; step < 4; ++step) {
      sumi = _mm512_dpbusd_epi32(sumi, trits(v[step], pow[step]), load512(y[i].qs + 64 * step));
    }
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum512_i32(sumi));
  }
  *s = sum;
}

template <>
void vec_dot<DType::TQ2_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ2_0* x = static_cast<const BlockTQ2_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i m2 = _mm512_set1_epi8(3);
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    // All 64 qs bytes at once: bits 2l..2l+1 of bytes 0..31 are elements 32l + m, of bytes 32..63
    // elements 128 + 32l + m.
    const __m512i q = load512(x[i].qs);
    __m512i sumi = minus_activation_sum(y[i]);
    for (int l = 0; l < 4; ++l) {
      // A shift count in a register: srli's immediate must be a constant for clang (SIMDe's emulation).
      const __m512i codes = _mm512_and_si512(_mm512_srl_epi16(q, _mm_cvtsi32_si128(2 * l)), m2);
      sumi = _mm512_dpbusd_epi32(sumi, codes, load_pair(y[i].qs + 32 * l, y[i].qs + 128 + 32 * l));
    }
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum512_i32(sumi));
  }
  *s = sum;
}

}  // namespace ox::kernels::avx512
