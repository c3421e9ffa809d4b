// NEON kernels using SDOT (armv8.2-a +dotprod) for the integer formats. Each matches the scalar
// reference named in core/quant/traits.h; patch() installs them over the plain NEON table.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::neon_dotprod {

void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* x, const void* y);
void vec_dot_mxfp4_q8_0(int64_t n, float* s, const void* x, const void* y);

void vec_dot_q2_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q3_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q4_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q5_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q6_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq4_xs_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_tq1_0_q8_k(int64_t n, float* s, const void* x, const void* y);
void vec_dot_tq2_0_q8_k(int64_t n, float* s, const void* x, const void* y);

// Tile kernels (KernelTable::gemm): rows x tokens, the GemmFn contract of kernels/kernels.h.
void gemm_q4_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q4_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q5_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q5_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q8_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_iq4_nl_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys);
void gemm_q2_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q3_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q4_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q5_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_q6_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys);
void gemm_iq4_xs_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys);

// Overwrites the integer dot products and tile kernels of `t` (those above, and the codebook
// i-quants' from iquant_load.h's registry), which starts as the NEON table
// (float formats and activation quantizers stay the plain NEON ones: SDOT does not apply to them).
void patch(KernelTable& t);

}  // namespace ox::kernels::neon_dotprod
