// SDOT (armv8.2-a +dotprod) dot products of the K-quants and IQ4_XS; bodies shared with the
// plain NEON ones in neon/kquant_impl.h.
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/dotprod/sdot.h"
#include "kernels/neon/kquant_impl.h"

namespace ox::kernels::neon_dotprod {

template <>
void vec_dot<DType::Q2_K>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q2_k_q8_k<DotSdot>(n, s, x, y);
}
template <>
void vec_dot<DType::Q3_K>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q3_k_q8_k<DotSdot>(n, s, x, y);
}
template <>
void vec_dot<DType::Q4_K>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q4_k_q8_k<DotSdot>(n, s, x, y);
}
template <>
void vec_dot<DType::Q5_K>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q5_k_q8_k<DotSdot>(n, s, x, y);
}
template <>
void vec_dot<DType::Q6_K>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q6_k_q8_k<DotSdot>(n, s, x, y);
}
template <>
void vec_dot<DType::IQ4_XS>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::iq4_xs_q8_k<DotSdot>(n, s, x, y);
}

}  // namespace ox::kernels::neon_dotprod
