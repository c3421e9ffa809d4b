// NEON (no SDOT) dot products of the K-quants and IQ4_XS; bodies in neon/kquant_impl.h.
#include "kernels/neon/kquant_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;

void vec_dot_q2_k_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q2_k_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_q3_k_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q3_k_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_q4_k_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q4_k_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_q5_k_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q5_k_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_q6_k_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q6_k_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_iq4_xs_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::iq4_xs_q8_k<DotNeon>(n, s, x, y);
}

}  // namespace ox::kernels::neon
