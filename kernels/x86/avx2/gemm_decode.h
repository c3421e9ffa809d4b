// Few-token paths of the x86 tile kernels (eight rows per pass, see gemm_decode.cpp): the gemm
// entry points of both x86 tables call them when too few tokens share a chunk to pay for packing panels.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::avx2 {

// GemmFn's contract for W in Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4 (instantiated in gemm_decode.cpp).
template <DType W>
void decode8(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
             int64_t n_tokens, float* y, int64_t y_stride);

}  // namespace ox::kernels::avx2
