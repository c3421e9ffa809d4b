// AVX2 + FMA + F16C kernels (x86-64). Each function matches the scalar reference named in
// core/quant/traits.h (vec_dot_ref / from_float_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/kernels.h"

namespace ox::kernels::avx2 {

// KernelTable::vec_dot[W]: a row of format W against a row of its activation format
// (quant_traits(W).vec_dot_type), matching quant_traits(W).vec_dot_ref. One specialisation per
// format, in that format's file (float_dot.cpp, block32_dot.cpp, q2_q3_k.cpp, ...); the gemm files
// name vec_dot<W> where they fall back to dot products, and patch() installs them all. Only the
// primary template is declared here, not each specialisation: the standard wants a specialisation
// declared in every file that uses it (no diagnostic required), which would bring back the
// per-format list; GCC and Clang call them as external functions, and a missing one fails to link.
template <DType W>
void vec_dot(int64_t n, float* s, const void* x, const void* y);
// Puts vec_dot<W> in t.vec_dot[W] for each W.
template <DType... W>
void install_vec_dots(KernelTable& t) {
  ((t.vec_dot[static_cast<uint32_t>(W)] = vec_dot<W>), ...);
}

// KernelTable::attn_accumulate and gemm[F16] (attention's scores over an F16 cache: K rows as the
// weights, f16 query rows as the activations).
float attn_softmax(float* s, int64_t n, float scale, float* max);
void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);
void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride);
// Rows of F16 / BF16 to f32 (KernelTable::to_float; exact).
void to_float_f16(const void* x, float* y, int64_t n);
void to_float_bf16(const void* x, float* y, int64_t n);
// to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; kv_to_float.cpp).
void patch_kv_to_float(KernelTable& t);

void quantize_row_f16(const float* x, void* y, int64_t n);  // f16_convert.cpp
// The activation quantizers of Q8_0, Q8_1 and Q8_K: one template (quantize.cpp), installed there.
void register_quantizers(KernelTable& t);

// KernelTable::silu_mul; reference ox::silu_mul_ref, bit for bit.
void silu_mul(float* x, const float* y, int64_t n);
// KernelTable::gelu; reference ox::gelu_ref, bit for bit (gelu.cpp).
void gelu(float* x, int64_t n);

// The gemm kernels (KernelTable::gemm, gemm_few; y[t * y_stride + r] = vec_dot(row r, token t)):
// templates over each format's policy structs, installed by the file that owns them, one line per
// format there. gemm_float.cpp: F32; gemm_block32.cpp: the 32-element block formats;
// gemm_kquant.cpp: the k-quants and IQ4_XS; gemm_iq.cpp: the codebook i-quants; gemm_tq.cpp: TQ1_0, TQ2_0.
void register_gemm_float(KernelTable& t);
void register_gemm_block32(KernelTable& t);
void register_gemm_kquant(KernelTable& t);
void register_gemm_iq(KernelTable& t);
void register_gemm_tq(KernelTable& t);
// GemmFn's function type, which the explicit instantiations of the shared gemm pieces name.
using GemmSig = std::remove_pointer_t<GemmFn>;
// Few tokens (a decode step of several sequences): one pass over the rows, each block unpacked
// once for up to 8 tokens, every output vec_dot's (Q4_K, Q6_K: gemm_few_kquant.cpp) or the
// eight-row decode kernels' (the formats of gemm_few_block32.cpp: Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4).
template <DType W>
void gemm_few_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                      uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void gemm_few_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void gemm_few_q6_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);

// Overwrites every slot above in `t` (which starts as a copy of the scalar table).
void patch(KernelTable& t);

}  // namespace ox::kernels::avx2
