// AVX2 dot products of Q4_K and Q5_K against Q8_K. Reference: quant_traits(Q4_K / Q5_K).vec_dot_ref.
// Per super-block: d*dy*sum_j sc_j*(q.a)_j - dmin*dy*sum_j m_j*(bsums of sub-block j), the
// integer parts exact; float accumulation order differs from the scalar reference.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// Scales of the 8 sub-blocks as i16 in both lanes; mins dot bsums as 8 i32 (min j times the
// sum of the two 16-element bsums of sub-block j).
struct KSetup {
  __m256i scales16;
  __m256i min_dot;
};

inline KSetup k_setup(const uint8_t* packed, const int16_t* bsums) {
  const KScales k = unpack_k4_scales(packed);
  const __m128i sc8 = _mm_set_epi32(0, 0, static_cast<int>(k.scales[1]), static_cast<int>(k.scales[0]));
  const __m128i mn8 = _mm_set_epi32(0, 0, static_cast<int>(k.mins[1]), static_cast<int>(k.mins[0]));
  KSetup s;
  s.scales16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));
  s.min_dot = _mm256_madd_epi16(load256(bsums), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8)));
  return s;
}

// Sub-blocks 2c (32 low-nibble elements) and 2c+1 (high nibbles) with their scales applied.
inline __m256i chunk_dot(__m256i lo, __m256i hi, const int8_t* a, __m256i scales16, int c) {
  const __m256i pl = mul_u8s8(lo, load256(a));
  const __m256i ph = mul_u8s8(hi, load256(a + 32));
  const __m256i sl = _mm256_shuffle_epi8(scales16, word_splat_mask(2 * c, 2 * c));
  const __m256i sh = _mm256_shuffle_epi8(scales16, word_splat_mask(2 * c + 1, 2 * c + 1));
  return _mm256_add_epi32(_mm256_madd_epi16(pl, sl), _mm256_madd_epi16(ph, sh));
}

}  // namespace

template <>
void vec_dot<DType::Q4_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const KSetup k = k_setup(x[i].scales, y[i].bsums);
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {  // 64 elements: 32 low nibbles then 32 high nibbles
      const __m256i q = load256(x[i].qs + 32 * c);
      const __m256i lo = _mm256_and_si256(q, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
      sumi = _mm256_add_epi32(sumi, chunk_dot(lo, hi, y[i].qs + 64 * c, k.scales16, c));
    }
    const float dy = y[i].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(k.min_dot), acc_min);
  }
  *s = hsum(_mm256_add_ps(acc, acc_min));
}

template <>
void vec_dot<DType::Q5_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_K* x = static_cast<const BlockQ5_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const KSetup k = k_setup(x[i].scales, y[i].bsums);
    // qh byte l holds the 5th bit of element l of every 32-element sub-block j at bit j; it is
    // shifted right by 2 per chunk so bits 0 and 1 always belong to the current chunk.
    __m256i hb = load256(x[i].qh);
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load256(x[i].qs + 32 * c);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bit4));
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                         _mm256_and_si256(_mm256_slli_epi16(hb, 3), bit4));
      hb = _mm256_srli_epi16(hb, 2);
      sumi = _mm256_add_epi32(sumi, chunk_dot(lo, hi, y[i].qs + 64 * c, k.scales16, c));
    }
    const float dy = y[i].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fnmadd_ps(_mm256_set1_ps(dy * fp16(x[i].dmin)), _mm256_cvtepi32_ps(k.min_dot), acc_min);
  }
  *s = hsum(_mm256_add_ps(acc, acc_min));
}

}  // namespace ox::kernels::avx2
