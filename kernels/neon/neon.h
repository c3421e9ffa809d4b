// NEON kernels (baseline armv8-a AArch64). Each function matches the scalar reference named in
// core/quant/traits.h (vec_dot_ref / from_float_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::neon {

void vec_dot_f32(int64_t n, float* s, const void* x, const void* y);
void vec_dot_f16(int64_t n, float* s, const void* x, const void* y);
void vec_dot_bf16(int64_t n, float* s, const void* x, const void* y);
// Rows of F16 / BF16 to f32 (KernelTable::to_float; exact).
void to_float_f16(const void* x, float* y, int64_t n);
void to_float_bf16(const void* x, float* y, int64_t n);
// to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; kv_to_float.cpp).
void patch_kv_to_float(KernelTable& t);

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
// KernelTable::gemm_wide of F32, F16 and BF16 (gemm_wide.cpp): outer-product tiles for encoders'
// order-free passes.
void patch_gemm_wide(KernelTable& t);

void quantize_row_q8_0(const float* x, void* y, int64_t n);
void quantize_row_q8_1(const float* x, void* y, int64_t n);
void quantize_row_q8_k(const float* x, void* y, int64_t n);

// Overwrites every slot above in `t` (which starts as a copy of the scalar table), and the
// vec_dot and gemm of the codebook i-quants, instantiated from iquant_load.h's registry.
void patch(KernelTable& t);

}  // namespace ox::kernels::neon
