// SIMD128 dot products of the K-quants (Q2_K..Q6_K) and IQ4_XS against Q8_K, each activation
// chunk split as it is read. The row loops live in kquant_impl.h (shared with the gemm per-row
// path). Reference: quant_traits(W).vec_dot_ref; integer parts exact.
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

using kquant::SplitOnTheFly;

template <>
void vec_dot<DType::Q2_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_q2_k(n / kQK_K, static_cast<const BlockQ2_K*>(vx), y, SplitOnTheFly{y});
}

template <>
void vec_dot<DType::Q3_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_q3_k(n / kQK_K, static_cast<const BlockQ3_K*>(vx), y, SplitOnTheFly{y});
}

template <>
void vec_dot<DType::Q4_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_q4_k(n / kQK_K, static_cast<const BlockQ4_K*>(vx), y, SplitOnTheFly{y});
}

template <>
void vec_dot<DType::Q5_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_q5_k(n / kQK_K, static_cast<const BlockQ5_K*>(vx), y, SplitOnTheFly{y});
}

template <>
void vec_dot<DType::Q6_K>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_q6_k(n / kQK_K, static_cast<const BlockQ6_K*>(vx), y, SplitOnTheFly{y});
}

template <>
void vec_dot<DType::IQ4_XS>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = kquant::row_iq4_xs(n / kQK_K, static_cast<const BlockIQ4_XS*>(vx), y, SplitOnTheFly{y});
}

}  // namespace ox::kernels::simd128
