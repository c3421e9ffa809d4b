// NEON (no SDOT) dot products of the 32-element block formats; bodies in neon/block32_impl.h.
#include "kernels/neon/block32_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;

template <>
void vec_dot<DType::Q4_0>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q4_0_q8_0<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::Q4_1>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q4_1_q8_1<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::Q5_0>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q5_0_q8_0<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::Q5_1>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q5_1_q8_1<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::Q8_0>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::q8_0_q8_0<DotNeon>(n, s, x, y);
}
template <>
void vec_dot<DType::IQ4_NL>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::iq4_nl_q8_0<DotNeon>(n, s, x, y);
}

template <>
void vec_dot<DType::MXFP4>(int64_t n, float* s, const void* x, const void* y) {
  neon_common::mxfp4_q8_0<DotNeon>(n, s, x, y);
}

}  // namespace ox::kernels::neon
