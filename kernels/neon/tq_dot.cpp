// NEON (no SDOT) dot products of TQ1_0 and TQ2_0 against Q8_K; bodies in neon/tq_impl.h.
#include "kernels/neon/neon.h"
#include "kernels/neon/tq_impl.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;

void vec_dot_tq1_0_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::tq1_0_q8_k<DotNeon>(n, s, x, y);
}
void vec_dot_tq2_0_q8_k(int64_t n, float* s, const void* x, const void* y) {
  neon_common::tq2_0_q8_k<DotNeon>(n, s, x, y);
}

}  // namespace ox::kernels::neon
