// AVX2 dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K. Both sum t * a with the
// codes t in 0..2 (TQ2_0: 0..3) as unsigned bytes, then take sum(a) off (the weights are t - 1),
// read from the activations' bsums. Reference: quant_traits(TQ1_0 / TQ2_0).vec_dot_ref, bit for
// bit: each block's integer sum is reduced to one int and its float term added in block order, as
// the reference does (one horizontal sum per 256 elements costs little, and a model then gives the
// same logits on every ISA).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/tq_decode.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// sum(a) of a Q8_K block as 8 i32 partial sums.
inline __m256i activation_sums(const BlockQ8_K& y) { return sum_pairs_i16(load256(y.bsums)); }

// sum (code - 1) * a over one block from its codes (tq_decode.h), 32 elements per register. Each
// maddubs lane pair is at most 2 * 3 * 127, so the eight i16 sums stay under 2^15.
inline int32_t block_sum(const __m256i codes[8], const BlockQ8_K& y) {
  __m256i sum16 = mul_u8s8(codes[0], load256(y.qs));
  for (int j = 1; j < 8; ++j) sum16 = _mm256_add_epi16(sum16, mul_u8s8(codes[j], load256(y.qs + 32 * j)));
  return hsum_i32(_mm256_sub_epi32(sum_pairs_i16(sum16), activation_sums(y)));
}

}  // namespace

template <>
void vec_dot<DType::TQ1_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ1_0* x = static_cast<const BlockTQ1_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    __m256i codes[8];
    tq::tq1_codes(x[i], codes);
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(block_sum(codes, y[i]));
  }
  *s = sum;
}

template <>
void vec_dot<DType::TQ2_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ2_0* x = static_cast<const BlockTQ2_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  float sum = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    __m256i codes[8];
    tq::tq2_codes(x[i], codes);
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(block_sum(codes, y[i]));
  }
  *s = sum;
}

}  // namespace ox::kernels::avx2
