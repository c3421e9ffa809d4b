// NEON (no SDOT) dot products of TQ1_0 and TQ2_0 against Q8_K; bodies in neon/tq_impl.h.
#include "kernels/neon/neon.h"
#include "kernels/neon/tq_impl.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;

template <>
void vec_dot<DType::TQ1_0>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::tq1_0_q8_k<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::TQ2_0>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::tq2_0_q8_k<DotNeon>(n, s, x, y);
}

}  // namespace ox::kernels::neon
