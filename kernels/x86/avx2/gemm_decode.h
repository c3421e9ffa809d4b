// Few-token paths of the AVX2 tile kernels (eight rows per pass, see gemm_decode.cpp): the gemm
// entry points call them when too few tokens share a chunk to pay for packing panels.
#pragma once

#include <cstdint>

namespace ox::kernels::avx2 {

void decode_q4_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
void decode_q4_1(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
void decode_q5_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
void decode_q8_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
void decode_iq4_nl(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void decode_q5_1(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);

}  // namespace ox::kernels::avx2
