// AVX-512 VNNI dot products of Q4_K and Q5_K against Q8_K: 64 elements (two 32-element
// sub-blocks) per vector, vpmaddubsw for the i16 pair sums, vpdpwssd to apply the 6-bit scales.
// Reference: quant_traits(Q4_K / Q5_K).vec_dot_ref; integer parts exact.
#include "core/quant/blocks.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {

struct KSetup {
  __m512i scales16;  // words 0..7: the 8 sub-block scales (upper words unused)
  __m256i min_dot;   // 8 x i32: min j times the bsums of sub-block j
};

inline KSetup k_setup(const uint8_t* packed, const int16_t* bsums) {
  const avx2::KScales k = avx2::unpack_k4_scales(packed);
  const __m128i sc8 = _mm_set_epi32(0, 0, static_cast<int>(k.scales[1]), static_cast<int>(k.scales[0]));
  const __m128i mn8 = _mm_set_epi32(0, 0, static_cast<int>(k.mins[1]), static_cast<int>(k.mins[0]));
  KSetup s;
  s.scales16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(sc8));
  s.min_dot = _mm256_madd_epi16(load256(bsums), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8)));
  return s;
}

// Chunks 2k and 2k+1 (128 elements from 64 qs bytes) as two vectors of element order
// [32 low nibbles | 32 high nibbles] each.
struct ChunkPair {
  __m512i a;
  __m512i b;
};
inline ChunkPair split_chunks(const uint8_t* qs) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i q = load512(qs);
  const __m512i lo = _mm512_and_si512(q, m4);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
  return {_mm512_shuffle_i64x2(lo, hi, 0x44), _mm512_shuffle_i64x2(lo, hi, 0xEE)};
}

// sumi += sum over the 64 elements of scale(sub-block) * w * a; `idx` picks the two scales.
inline __m512i scaled_dot(__m512i sumi, __m512i w, const int8_t* a, __m512i scales16, __m512i idx) {
  const __m512i p = _mm512_maddubs_epi16(w, load512(a));
  return _mm512_dpwssd_epi32(sumi, p, _mm512_permutexvar_epi16(idx, scales16));
}

}  // namespace

template <>
void vec_dot<DType::Q4_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i idx[4] = {word_pair_index(0, 1), word_pair_index(2, 3), word_pair_index(4, 5), word_pair_index(6, 7)};
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const KSetup k = k_setup(x[i].scales, y[i].bsums);
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const ChunkPair c = split_chunks(x[i].qs + 64 * h);
      sumi = scaled_dot(sumi, c.a, y[i].qs + 128 * h, k.scales16, idx[2 * h]);
      sumi = scaled_dot(sumi, c.b, y[i].qs + 128 * h + 64, k.scales16, idx[2 * h + 1]);
    }
    const float dy = y[i].d;
    acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(k.min_dot), acc_min);
  }
  *s = hsum512(acc) + avx2::hsum(acc_min);
}

namespace {

// One Q4_K row against T Q8_K activation rows (a_stride bytes apart): each super-block's nibbles,
// scales and mins are unpacked once for all T tokens; per (row, token) the arithmetic and its order
// are vec_dot<DType::Q4_K>'s, so each output is the float that vec_dot gives.
template <int T>
void q4_k_row_tokens(int64_t nb, const BlockQ4_K* x, const uint8_t* a, uint64_t a_stride, float* y, int64_t y_stride) {
  const __m512i idx[4] = {word_pair_index(0, 1), word_pair_index(2, 3), word_pair_index(4, 5), word_pair_index(6, 7)};
  __m512 acc[T];
  __m256 acc_min[T];
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm512_setzero_ps();
    acc_min[t] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < nb; ++i) {
    const avx2::KScales k = avx2::unpack_k4_scales(x[i].scales);
    const __m128i sc8 = _mm_set_epi32(0, 0, static_cast<int>(k.scales[1]), static_cast<int>(k.scales[0]));
    const __m128i mn8 = _mm_set_epi32(0, 0, static_cast<int>(k.mins[1]), static_cast<int>(k.mins[0]));
    const __m512i scales16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(sc8));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8));
    __m512i sc[4], wq[4];
    for (int c = 0; c < 4; ++c) sc[c] = _mm512_permutexvar_epi16(idx[c], scales16);
    for (int h = 0; h < 2; ++h) {
      const ChunkPair c = split_chunks(x[i].qs + 64 * h);
      wq[2 * h] = c.a;
      wq[2 * h + 1] = c.b;
    }
    const float dx = fp16(x[i].d), dmin = fp16(x[i].dmin);
    for (int t = 0; t < T; ++t) {
      const BlockQ8_K& yb = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride)[i];
      __m512i sumi = _mm512_setzero_si512();
      for (int c = 0; c < 4; ++c) {
        sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(wq[c], load512(yb.qs + 64 * c)), sc[c]);
      }
      const __m256i min_dot = _mm256_madd_epi16(load256(yb.bsums), mins16);
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(yb.d * dx), _mm512_cvtepi32_ps(sumi), acc[t]);
      acc_min[t] = _mm256_fnmadd_ps(_mm256_set1_ps(yb.d * dmin), _mm256_cvtepi32_ps(min_dot), acc_min[t]);
    }
  }
  for (int t = 0; t < T; ++t) y[t * y_stride] = hsum512(acc[t]) + avx2::hsum(acc_min[t]);
}

}  // namespace

void gemm_few_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const auto row_tokens = [](auto tokens, auto... args) { q4_k_row_tokens<decltype(tokens)::value>(args...); };
  few_tokens::rows<BlockQ4_K, kQK_K>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, row_tokens);
}

template <>
void vec_dot<DType::Q5_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_K* x = static_cast<const BlockQ5_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i idx[4] = {word_pair_index(0, 1), word_pair_index(2, 3), word_pair_index(4, 5), word_pair_index(6, 7)};
  // qh byte l has the 5th bit of element l of sub-block j at bit j; chunk c's vector holds
  // sub-block 2c in its low half and 2c+1 in its high half, so test bit 2c / 2c+1 per half.
  __m512i bit_of[4];
  for (int c = 0; c < 4; ++c) {
    bit_of[c] = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * c))),
                                   _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1))), 1);
  }
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const KSetup k = k_setup(x[i].scales, y[i].bsums);
    const __m512i hb = _mm512_broadcast_i64x4(load256(x[i].qh));
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const ChunkPair c = split_chunks(x[i].qs + 64 * h);
      const __m512i wa = _mm512_mask_add_epi8(c.a, _mm512_test_epi8_mask(hb, bit_of[2 * h]), c.a, sixteen);
      const __m512i wb = _mm512_mask_add_epi8(c.b, _mm512_test_epi8_mask(hb, bit_of[2 * h + 1]), c.b, sixteen);
      sumi = scaled_dot(sumi, wa, y[i].qs + 128 * h, k.scales16, idx[2 * h]);
      sumi = scaled_dot(sumi, wb, y[i].qs + 128 * h + 64, k.scales16, idx[2 * h + 1]);
    }
    const float dy = y[i].d;
    acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(k.min_dot), acc_min);
  }
  *s = hsum512(acc) + avx2::hsum(acc_min);
}

}  // namespace ox::kernels::avx512
