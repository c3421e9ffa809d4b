// SIMD128 dot products of the codebook i-quants (IQ2_XXS .. IQ1_M) against Q8_K, each activation
// chunk split as it is read. The row loop and the formats' decoding live in iquant_impl.h (shared
// with the gemm per-row path). Reference: quant_traits(W).vec_dot_ref; integer parts exact.
#include "kernels/simd128/iquant_impl.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
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
