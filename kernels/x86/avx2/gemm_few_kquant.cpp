// AVX2 products of Q4_K and Q6_K against Q8_K for a few tokens (a decode step of several
// sequences): each super-block's quants and scale multipliers are unpacked once for up to 8 tokens,
// no panels. Per (row, token) the integer lanes and the float operations are those of
// vec_dot<DType::Q4_K> / vec_dot<DType::Q6_K> (q4_q5_k.cpp, q6_k_iq4_xs.cpp), so each output is the float
// vec_dot gives: a sequence gets the same bits in a step of several as alone (dots_by_row).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// The loops run sub-block pair by pair, tokens inner: one pair's quants and scale words (4 ymm)
// stay in registers with one i32 sum per token (AVX2 has 16 ymm; a whole super-block unpacked at
// once spilled). Integer sums are exact, so their order leaves vec_dot's lane values unchanged.

// One Q4_K row against T Q8_K activation rows (a_stride bytes apart), outputs y_stride apart.
template <int T>
void q4_k_row_tokens(int64_t nb, const BlockQ4_K* x, const uint8_t* a, uint64_t a_stride, float* y, int64_t y_stride) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  __m256 acc[T], acc_min[T];
  for (int t = 0; t < T; ++t) acc[t] = acc_min[t] = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const KScales k = unpack_k4_scales(x[i].scales);
    const __m128i sc8 = _mm_set_epi32(0, 0, static_cast<int>(k.scales[1]), static_cast<int>(k.scales[0]));
    const __m128i mn8 = _mm_set_epi32(0, 0, static_cast<int>(k.mins[1]), static_cast<int>(k.mins[0]));
    const __m256i scales16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8));
    const BlockQ8_K* yb[T];
    for (int t = 0; t < T; ++t) yb[t] = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride) + i;
    __m256i sumi[T];
    for (int t = 0; t < T; ++t) sumi[t] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {  // sub-blocks 2c (low nibbles of chunk c) and 2c + 1 (high)
      const __m256i v = load256(x[i].qs + 32 * c);
      const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      const __m256i sl = _mm256_shuffle_epi8(scales16, word_splat_mask(2 * c, 2 * c));
      const __m256i sh = _mm256_shuffle_epi8(scales16, word_splat_mask(2 * c + 1, 2 * c + 1));
      for (int t = 0; t < T; ++t) {
        const __m256i pl = _mm256_madd_epi16(mul_u8s8(lo, load256(yb[t]->qs + 64 * c)), sl);
        const __m256i ph = _mm256_madd_epi16(mul_u8s8(hi, load256(yb[t]->qs + 64 * c + 32)), sh);
        sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(pl, ph));
      }
    }
    const float dx = fp16(x[i].d), dmin = fp16(x[i].dmin);
    for (int t = 0; t < T; ++t) {
      const __m256i min_dot = _mm256_madd_epi16(load256(yb[t]->bsums), mins16);
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(yb[t]->d * dx), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
      acc_min[t] = _mm256_fnmadd_ps(_mm256_set1_ps(yb[t]->d * dmin), _mm256_cvtepi32_ps(min_dot), acc_min[t]);
    }
  }
  for (int t = 0; t < T; ++t) y[t * y_stride] = hsum(_mm256_add_ps(acc[t], acc_min[t]));
}

// One Q6_K row against T Q8_K activation rows: q in 0..63 against the activations, the -32 offset
// through the bsums, as in vec_dot<DType::Q6_K>.
template <int T>
void q6_k_row_tokens(int64_t nb, const BlockQ6_K* x, const uint8_t* a, uint64_t a_stride, float* y, int64_t y_stride) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m2hi = _mm256_set1_epi8(0x30);
  __m256 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(load128(x[i].scales));
    const BlockQ8_K* yb[T];
    for (int t = 0; t < T; ++t) yb[t] = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride) + i;
    __m256i sumi[T];
    for (int t = 0; t < T; ++t) {
      sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                 _mm256_slli_epi32(_mm256_madd_epi16(load256(yb[t]->bsums), scales16), 5));
    }
    for (int h = 0; h < 2; ++h) {
      const __m256i s = h == 0 ? _mm256_permute2x128_si256(scales16, scales16, 0x00)
                               : _mm256_permute2x128_si256(scales16, scales16, 0x11);
      const __m256i qh = load256(x[i].qh + 32 * h);
      for (int j = 0; j < 2; ++j) {
        // Planes j and j + 2 of half h: ql bytes 64h + 32j.., their low / high nibbles, and the
        // qh bit pairs at 4 - 2j / 0 - 2j (vec_dot<DType::Q6_K>'s q0..q3).
        const __m256i l = load256(x[i].ql + 64 * h + 32 * j);
        const __m256i hb = j == 0 ? qh : _mm256_srli_epi16(qh, 2);
        const __m256i q_lo = _mm256_or_si256(_mm256_and_si256(l, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m2hi));
        const __m256i q_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l, 4), m4), _mm256_and_si256(hb, m2hi));
        const __m256i s_lo = _mm256_shuffle_epi8(s, word_splat_mask(2 * j, 2 * j + 1));
        const __m256i s_hi = _mm256_shuffle_epi8(s, word_splat_mask(2 * j + 4, 2 * j + 5));
        for (int t = 0; t < T; ++t) {
          const int8_t* q = yb[t]->qs + 128 * h;
          const __m256i p_lo = _mm256_madd_epi16(mul_u8s8(q_lo, load256(q + 32 * j)), s_lo);
          const __m256i p_hi = _mm256_madd_epi16(mul_u8s8(q_hi, load256(q + 32 * j + 64)), s_hi);
          sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(p_lo, p_hi));
        }
      }
    }
    const float dx = fp16(x[i].d);
    for (int t = 0; t < T; ++t) {
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(yb[t]->d * dx), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) y[t * y_stride] = hsum(acc[t]);
}

}  // namespace

void gemm_few_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                   int64_t n_tokens, float* y, int64_t y_stride) {
  const auto row_tokens = [](auto tokens, auto... args) { q4_k_row_tokens<decltype(tokens)::value>(args...); };
  few_tokens::rows<BlockQ4_K, kQK_K>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, row_tokens);
}

void gemm_few_q6_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                   int64_t n_tokens, float* y, int64_t y_stride) {
  const auto row_tokens = [](auto tokens, auto... args) { q6_k_row_tokens<decltype(tokens)::value>(args...); };
  few_tokens::rows<BlockQ6_K, kQK_K>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, row_tokens);
}

}  // namespace ox::kernels::avx2
