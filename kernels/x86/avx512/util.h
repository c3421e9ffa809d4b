// AVX-512 building blocks shared by the kernel files of this folder (static inline for the
// same reason as avx2/util.h: no shared COMDAT copies across ISA flags).
#pragma once

// GCC 12's AVX-512 headers build many intrinsics on _mm512_undefined_*(), which -Wuninitialized
// reports once inlined (GCC PR 105593, fixed in 13). The warning is false: silence it here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx512 {

using avx2::fp16;
using avx2::load128;
using avx2::load256;

static inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

static inline float hsum512(__m512 v) {
  const __m256 s =
      _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  return avx2::hsum(s);
}

// Two 32-byte activation blocks (Q8_0 / Q8_1 quants, not adjacent in memory) as one vector.
static inline __m512i load_pair(const int8_t* a0, const int8_t* a1) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(load256(a0)), load256(a1), 1);
}

// 32 packed bytes = two blocks of 16 (q0 | q1) -> 128 nibbles in element order:
// [q0 low nibbles, q0 high nibbles, q1 low nibbles, q1 high nibbles], one 128-bit lane each.
static inline __m512i unpack_nibbles_x2(__m256i q) {
  const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(q), _mm256_srli_epi16(q, 4), 1);
  const __m512i ordered = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 4, 5, 2, 3, 6, 7), v);
  return _mm512_and_si512(ordered, _mm512_set1_epi8(0x0F));
}

static inline __m512i unpack_nibbles_x2(const uint8_t* q0, const uint8_t* q1) {
  return unpack_nibbles_x2(_mm256_inserti128_si256(_mm256_castsi128_si256(load128(q0)), load128(q1), 1));
}

// Per-lane multipliers of a block pair: lanes 0-7 get dx0*dy0, lanes 8-15 dx1*dy1. The four
// fp16 scales are converted together.
static inline __m512 scale_pair(uint16_t dx0, uint16_t dy0, uint16_t dx1, uint16_t dy1) {
  const __m128 h = _mm_cvtph_ps(_mm_setr_epi16(static_cast<int16_t>(dx0), static_cast<int16_t>(dx1),
                                               static_cast<int16_t>(dy0), static_cast<int16_t>(dy1), 0, 0, 0, 0));
  const __m128 d = _mm_mul_ps(h, _mm_movehl_ps(h, h));  // lanes 0, 1 = dx0*dy0, dx1*dy1
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_castps128_ps512(d));
}

// scale_pair of blocks x[0], x[1] against y[0], y[1]: fp16 scales through scale_pair, MXFP4's
// exponent bytes through avx2::block_scale.
template <typename X, typename Y>
static inline __m512 block_pair_scales(const X* x, const Y* y) {
  return scale_pair(x[0].d, y[0].d, x[1].d, y[1].d);
}
static inline __m512 block_pair_scales(const BlockMXFP4* x, const BlockQ8_0* y) {
  const __m128 d = _mm_setr_ps(avx2::block_scale(x[0], y[0]), avx2::block_scale(x[1], y[1]), 0.0f, 0.0f);
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_castps128_ps512(d));
}

// permutexvar index: element k over lanes 0-7 and element k+1 over lanes 8-15.
static inline __m512i lane_halves_index(int k) {
  return _mm512_inserti64x4(_mm512_set1_epi32(k), _mm256_set1_epi32(k + 1), 1);
}

// i32 lanes = sums of 4 adjacent u8 x s8 products (vpdpbusd, exact).
static inline __m512i dot_u8s8(__m512i u, __m512i s) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s); }

// Index vectors for vpermw: word `lo` of a vector repeated over words 0..15 and `hi` over 16..31.
static inline __m512i word_pair_index(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(lo))),
                            _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// Words k0..k3 each repeated over 8 consecutive words (scales of four 16-element sub-blocks).
static inline __m512i word_quad_index(int k0) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(
          _mm256_setr_m128i(_mm_set1_epi16(static_cast<int16_t>(k0)), _mm_set1_epi16(static_cast<int16_t>(k0 + 1)))),
      _mm256_setr_m128i(_mm_set1_epi16(static_cast<int16_t>(k0 + 2)), _mm_set1_epi16(static_cast<int16_t>(k0 + 3))), 1);
}

// The few-token row walk and threshold (gemm_few_*), shared with the AVX2 kernels.
namespace few_tokens = avx2::few_tokens;

// avx2::F32x8 with 16 lanes: the f32 vector operations the AVX-512 float kernels share.
struct F32x16 {
  static constexpr int kLanes = 16;
  using Reg = __m512;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg loadu(const uint8_t* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg splat(float x) { return _mm512_set1_ps(x); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static float hsum(Reg v) { return hsum512(v); }
};

}  // namespace ox::kernels::avx512
