// AVX-512 VNNI dot products of Q6_K and IQ4_XS against Q8_K.
// Reference: quant_traits(Q6_K / IQ4_XS).vec_dot_ref; integer parts exact.
#include "core/quant/blocks.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {

template <>
void vec_dot<DType::Q6_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  // Top-2-bit planes of qh: elements +0 / +32 of a half need bits 0-1 / 2-3 moved up to 4-5
  // (shift left 4 / 2), elements +64 / +96 bits 4-5 / 6-7 (shift right 0 / 2).
  const __m512i up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i down = _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1);
  const __m512i idx[4] = {word_quad_index(0), word_quad_index(4), word_quad_index(8), word_quad_index(12)};
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(load128(x[i].scales));
    // q - 32 with q in 0..63: start from -32 * sum sc * bsum (zero-extended to 512 bits).
    const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load256(y[i].bsums), sc16), 5);
    __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
    const __m512i scales16 = _mm512_castsi256_si512(sc16);
    for (int h = 0; h < 2; ++h) {
      // ql bytes 64h..64h+63: low nibbles = elements 128h + 0..63, high nibbles = +64..127.
      const __m512i l = load512(x[i].ql + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(load256(x[i].qh + 32 * h));
      const __m512i q01 = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, up), m30));
      const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                          _mm512_and_si512(_mm512_srlv_epi16(qh, down), m30));
      const int8_t* a = y[i].qs + 128 * h;
      const __m512i p01 = _mm512_maddubs_epi16(q01, load512(a));
      const __m512i p23 = _mm512_maddubs_epi16(q23, load512(a + 64));
      sumi = _mm512_dpwssd_epi32(sumi, p01, _mm512_permutexvar_epi16(idx[2 * h], scales16));
      sumi = _mm512_dpwssd_epi32(sumi, p23, _mm512_permutexvar_epi16(idx[2 * h + 1], scales16));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
  }
  *s = hsum512(acc);
}

namespace {

// One Q6_K row against T Q8_K activation rows (a_stride bytes apart): each super-block's 6-bit
// values and scales are unpacked once for all T tokens; per (row, token) the arithmetic and its
// order are vec_dot<DType::Q6_K>'s, so each output is the float that vec_dot gives.
template <int T>
void q6_k_row_tokens(int64_t nb, const BlockQ6_K* x, const uint8_t* a, uint64_t a_stride, float* y, int64_t y_stride) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  const __m512i up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i down = _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1);
  const __m512i idx[4] = {word_quad_index(0), word_quad_index(4), word_quad_index(8), word_quad_index(12)};
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(load128(x[i].scales));
    const __m512i scales16 = _mm512_castsi256_si512(sc16);
    __m512i sc[4], wq[4];
    for (int c = 0; c < 4; ++c) sc[c] = _mm512_permutexvar_epi16(idx[c], scales16);
    for (int h = 0; h < 2; ++h) {  // as in vec_dot<DType::Q6_K>
      const __m512i l = load512(x[i].ql + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(load256(x[i].qh + 32 * h));
      wq[2 * h] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, up), m30));
      wq[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                      _mm512_and_si512(_mm512_srlv_epi16(qh, down), m30));
    }
    const float dx = fp16(x[i].d);
    for (int t = 0; t < T; ++t) {
      const BlockQ8_K& yb = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride)[i];
      const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load256(yb.bsums), sc16), 5);
      __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
      for (int c = 0; c < 4; ++c) {
        sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(wq[c], load512(yb.qs + 64 * c)), sc[c]);
      }
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(yb.d * dx), _mm512_cvtepi32_ps(sumi), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) y[t * y_stride] = hsum512(acc[t]);
}

}  // namespace

void gemm_few_q6_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const auto row_tokens = [](auto tokens, auto... args) { q6_k_row_tokens<decltype(tokens)::value>(args...); };
  few_tokens::rows<BlockQ6_K, kQK_K>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, row_tokens);
}

template <>
void vec_dot<DType::IQ4_XS>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  // Table + 128 (1..241) is unsigned for vpdpbusd; 128 * sum(a) per sub-block comes off via bsums.
  const __m512i table =
      _mm512_broadcast_i32x4(_mm_xor_si128(load128(kIQ4NLValues), _mm_set1_epi8(static_cast<char>(0x80))));
  __m512i pair_idx[4];
  for (int k = 0; k < 4; ++k) {
    pair_idx[k] = _mm512_inserti64x4(_mm512_set1_epi32(2 * k), _mm256_set1_epi32(2 * k + 1), 1);
  }
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i ls32 = avx2::iq4_xs_scales(x[i].scales_l, x[i].scales_h);  // bias removed
    const __m512i scales = _mm512_castsi256_si512(ls32);
    // Each scale twice (one per 16-element bsum) as i16, for the 128 * sum(a) correction.
    const __m128i ls16 = _mm_packs_epi32(_mm256_castsi256_si128(ls32), _mm256_extracti128_si256(ls32, 1));
    const __m256i ls_pairs = _mm256_setr_m128i(_mm_unpacklo_epi16(ls16, ls16), _mm_unpackhi_epi16(ls16, ls16));
    const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load256(y[i].bsums), ls_pairs), 7);
    __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), bias), 0);
    for (int k = 0; k < 4; ++k) {  // sub-blocks 2k, 2k+1: 32 qs bytes, 64 activations
      const __m512i w = _mm512_shuffle_epi8(table, unpack_nibbles_x2(load256(x[i].qs + 32 * k)));
      const __m512i d = dot_u8s8(w, load512(y[i].qs + 64 * k));
      sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(d, _mm512_permutexvar_epi32(pair_idx[k], scales)));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
  }
  *s = hsum512(acc);
}

}  // namespace ox::kernels::avx512
