// wasm SIMD128 kernels (relaxed SIMD only in relaxed_slots.h). Each function matches the scalar reference named in
// core/quant/traits.h (vec_dot_ref / from_float_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::simd128 {

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

void quantize_row_q8_0(const float* x, void* y, int64_t n);
void quantize_row_q8_1(const float* x, void* y, int64_t n);
void quantize_row_q8_k(const float* x, void* y, int64_t n);

// KernelTable::silu_mul; reference ox::silu_mul_ref, bit for bit.
void silu_mul(float* x, const float* y, int64_t n);
// KernelTable::attn_softmax / attn_accumulate (attention.cpp); references in core/base/attention_ref.h.
float attn_softmax(float* s, int64_t n, float scale, float* max);
void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);
void attn_accumulate_rows_f16(float* acc, const float* w, const uint8_t* v, uint64_t v_row_bytes, int64_t n,
                              int64_t dv);

// Tile kernels (kernels.h GemmFn): gemm_float.cpp, gemm_block32.cpp, gemm_kquant.cpp.
void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q4_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q4_1(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q5_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q5_1(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q8_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_iq4_nl(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
void gemm_mxfp4(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q2_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q3_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q5_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
// The interleaved layouts (core/quant/interleave.h; prefill through the same tiles, decode through
// relaxed_slots.h's q4_k_il_pairs / q6_k_il_pairs).
void gemm_q4_k_il(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                  uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q6_k_il(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                  uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void gemm_q6_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
               int64_t n_tokens, float* y, int64_t y_stride);
void gemm_iq4_xs(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride);
// TQ2_0 (tq_dot.cpp): one token through the tq2_0_pairs slot, more tokens vec_dot per row.
void gemm_tq2_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride);
// KernelTable::gemm_wide of F32, F16 and BF16 (gemm_wide.cpp): outer-product tiles for encoders'
// order-free passes.
void patch_gemm_wide(KernelTable& t);
// The codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M): their vec_dot
// and gemm slots, one template instantiation per format (iquant.cpp).
void patch_iquants(KernelTable& t);

// Overwrites every slot above in `t` (which starts as a copy of the scalar table).
void patch(KernelTable& t);

}  // namespace ox::kernels::simd128
