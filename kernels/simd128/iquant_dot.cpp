// SIMD128 dot products of the codebook i-quants (IQ2_XXS .. IQ1_M) against Q8_K, each activation
// chunk split as it is read. The row loop and the formats' decoding live in iquant_impl.h (shared
// with the gemm per-row path). Reference: quant_traits(W).vec_dot_ref; integer parts exact.
#include "kernels/simd128/iquant_impl.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

namespace iquant {

uint64_t kIQ1MWeights[4096];

namespace {
// Entry (delta bit << 11) | index: each byte of kIQ1SGrid[index] (-1, 0, 1) times 8, plus 1 or -1.
const bool kIQ1MWeightsBuilt = [] {
  for (uint32_t i = 0; i < 4096; ++i) {
    const uint64_t grid = quant::kIQ1SGrid[i & 2047];
    const int delta = (i & 2048) ? -1 : 1;
    uint64_t w = 0;
    for (int j = 0; j < 8; ++j) {
      const int v = 8 * static_cast<int8_t>(static_cast<uint8_t>(grid >> (8 * j))) + delta;
      w |= static_cast<uint64_t>(static_cast<uint8_t>(v)) << (8 * j);
    }
    kIQ1MWeights[i] = w;
  }
  return true;
}();
}  // namespace

}  // namespace iquant

namespace {

template <typename F>
void vec_dot_iq(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = iquant::row<F>(n / kQK_K, static_cast<const typename F::Block*>(vx), y, kquant::SplitOnTheFly{y});
}

}  // namespace

void vec_dot_iq2_xxs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ2XXS>(n, s, x, y); }
void vec_dot_iq2_xs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ2XS>(n, s, x, y); }
void vec_dot_iq2_s_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ2S>(n, s, x, y); }
void vec_dot_iq3_xxs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ3XXS>(n, s, x, y); }
void vec_dot_iq3_s_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ3S>(n, s, x, y); }
void vec_dot_iq1_s_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ1S>(n, s, x, y); }
void vec_dot_iq1_m_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq<iquant::IQ1M>(n, s, x, y); }

}  // namespace ox::kernels::simd128
