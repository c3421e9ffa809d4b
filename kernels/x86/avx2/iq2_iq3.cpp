// AVX2 dot products of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S against Q8_K. Reference:
// quant_traits(W).vec_dot_ref (core/quant/iq2.cpp, iq3.cpp). Per 64 elements: the codebook rows'
// unsigned magnitudes in two vectors, the signs moved onto the activations, vpmaddubsw, then vpmaddwd
// by the integer multipliers. Integer sums per super-block exact; float accumulation order differs;
// the power-of-two factor (1/8, 1/4) comes last, as there.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/iq_util.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// (grid . signed activations) of 64 elements as i16 pair sums times the i16 multipliers m0
// (elements 0..31) and m1 (32..63), in i32.
inline __m256i scaled_dots(const IqPair& q, const int8_t* a, __m256i m0, __m256i m1) {
  __m256i s0, s1;
  sign_masks(q.signs, &s0, &s1);
  const __m256i d0 = _mm256_maddubs_epi16(q.g0, apply_sign(load256(a), s0));
  const __m256i d1 = _mm256_maddubs_epi16(q.g1, apply_sign(load256(a + 32), s1));
  return _mm256_add_epi32(_mm256_madd_epi16(d0, m0), _mm256_madd_epi16(d1, m1));
}

// The i16 multipliers of sub-block ib's two halves (low lane: elements 0..15, high: 16..31).
// IQ2_XS and IQ2_S: 2 ls + 1 per 16 elements, unpacked once per block (word_splat_mask picks two).
template <typename Block>
struct NibbleMults {
  __m256i scales16;
  explicit NibbleMults(const Block& b) : scales16(iq2_scales16(b.scales)) {}
  __m256i at(const Block&, int ib) const { return _mm256_shuffle_epi8(scales16, word_splat_mask(ib, ib)); }
};
// IQ2_XXS, IQ3_XXS and IQ3_S: one per sub-block of 32, kMult(block, ib).
template <typename Block, int (*kMult)(const Block&, int)>
struct SubBlockMults {
  explicit SubBlockMults(const Block&) {}
  __m256i at(const Block& b, int ib) const { return _mm256_set1_epi16(static_cast<int16_t>(kMult(b, ib))); }
};

// The integer sums count eighths of d (IQ2: 2 ls + 1), quarters (IQ3_XXS: 2s + 1) or d itself
// (IQ3_S: 1 + 2s): kUnitsPerD is 8, 4 or 1, its inverse applied last (an int: clang 14 takes no
// float template parameters).
template <typename Block, IqPair (*kPair)(const Block&, int), class Mults, int kUnitsPerD>
void vec_dot_pairs(int64_t n, float* s, const void* vx, const void* vy) {
  const Block* x = static_cast<const Block*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const Mults mults(x[i]);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ib += 2) {
      const __m256i m0 = mults.at(x[i], ib), m1 = mults.at(x[i], ib + 1);
      sumi = _mm256_add_epi32(sumi, scaled_dots(kPair(x[i], ib), y[i].qs + 32 * ib, m0, m1));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *s = (1.0f / static_cast<float>(kUnitsPerD)) * hsum(acc);  // a power of two: exact
}

}  // namespace

template <>
void vec_dot<DType::IQ2_XXS>(int64_t n, float* s, const void* vx, const void* vy) {
  vec_dot_pairs<BlockIQ2_XXS, iq2_xxs_pair, SubBlockMults<BlockIQ2_XXS, iq2_xxs_mult>, 8>(n, s, vx, vy);
}

template <>
void vec_dot<DType::IQ2_XS>(int64_t n, float* s, const void* vx, const void* vy) {
  vec_dot_pairs<BlockIQ2_XS, iq2_xs_pair, NibbleMults<BlockIQ2_XS>, 8>(n, s, vx, vy);
}

template <>
void vec_dot<DType::IQ2_S>(int64_t n, float* s, const void* vx, const void* vy) {
  vec_dot_pairs<BlockIQ2_S, iq2_s_pair, NibbleMults<BlockIQ2_S>, 8>(n, s, vx, vy);
}

template <>
void vec_dot<DType::IQ3_XXS>(int64_t n, float* s, const void* vx, const void* vy) {
  vec_dot_pairs<BlockIQ3_XXS, iq3_xxs_pair, SubBlockMults<BlockIQ3_XXS, iq3_xxs_mult>, 4>(n, s, vx, vy);
}

template <>
void vec_dot<DType::IQ3_S>(int64_t n, float* s, const void* vx, const void* vy) {
  vec_dot_pairs<BlockIQ3_S, iq3_s_pair, SubBlockMults<BlockIQ3_S, iq3_s_mult>, 1>(n, s, vx, vy);
}

}  // namespace ox::kernels::avx2
