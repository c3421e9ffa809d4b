// SIMD128 dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4)
// against Q8_0 / Q8_1, each activation block split as it is read. The row loops live in
// block32_impl.h (shared with the gemm per-row path). Reference: quant_traits(W).vec_dot_ref.
#include "kernels/simd128/block32_impl.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

using block32::SplitOnTheFly;

template <>
void vec_dot<DType::Q4_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = block32::dot_q4_0(n / kQK4_0, static_cast<const BlockQ4_0*>(vx), y, SplitOnTheFly<BlockQ8_0>{y});
}

template <>
void vec_dot<DType::Q4_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  *s = block32::dot_q4_1(n / kQK4_1, static_cast<const BlockQ4_1*>(vx), y, SplitOnTheFly<BlockQ8_1>{y});
}

template <>
void vec_dot<DType::Q5_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = block32::dot_q5_0(n / kQK5_0, static_cast<const BlockQ5_0*>(vx), y, SplitOnTheFly<BlockQ8_0>{y});
}

template <>
void vec_dot<DType::Q5_1>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  *s = block32::dot_q5_1(n / kQK5_1, static_cast<const BlockQ5_1*>(vx), y, SplitOnTheFly<BlockQ8_1>{y});
}

template <>
void vec_dot<DType::Q8_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = block32::dot_q8_0(n / kQK8_0, static_cast<const BlockQ8_0*>(vx), y, SplitOnTheFly<BlockQ8_0>{y});
}

template <>
void vec_dot<DType::IQ4_NL>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = block32::dot_iq4_nl(n / kQK4_NL, static_cast<const BlockIQ4_NL*>(vx), y, SplitOnTheFly<BlockQ8_0>{y});
}

template <>
void vec_dot<DType::MXFP4>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = block32::dot_mxfp4(n / kQKMXFP4, static_cast<const BlockMXFP4*>(vx), y, SplitOnTheFly<BlockQ8_0>{y});
}

}  // namespace ox::kernels::simd128
