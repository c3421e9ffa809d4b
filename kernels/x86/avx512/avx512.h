// AVX-512 kernels (x86-64: F, BW, VL, DQ and VNNI). Each function matches the scalar reference
// named in core/quant/traits.h (vec_dot_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::avx512 {

// KernelTable::vec_dot[W], as avx2::vec_dot<W> (avx2.h): one specialisation per format this ISA
// accelerates, in that format's file; the codebook i-quants keep the AVX2 ones.
template <DType W>
void vec_dot(int64_t n, float* s, const void* x, const void* y);
template <DType... W>
void install_vec_dots(KernelTable& t) {
  ((t.vec_dot[static_cast<uint32_t>(W)] = vec_dot<W>), ...);
}

// Attention over an F16 cache (kernels/x86/avx512/attention.cpp): gemm[F16] and attn_accumulate.
void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride);
void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);
// KernelTable::gelu; reference ox::gelu_ref, bit for bit (gelu.cpp).
void gelu(float* x, int64_t n);

// The gemm kernels (KernelTable::gemm, gemm_few), installed by the file that owns them, one line
// per format there (as in avx2.h): gemm_float.cpp, gemm_block32.cpp, gemm_kquant.cpp, gemm_iq.cpp
// (the codebook i-quants; their vec_dot stays the AVX2 table's), gemm_tq.cpp (TQ1_0, TQ2_0).
void register_gemm_float(KernelTable& t);
void register_gemm_block32(KernelTable& t);
void register_gemm_kquant(KernelTable& t);
void register_gemm_iq(KernelTable& t);
void register_gemm_tq(KernelTable& t);
// Few tokens (a decode step of several sequences): one pass over the rows, each super-block
// unpacked once for up to 8 tokens; every output equals vec_dot's (q4_q5_k.cpp, q6_k_iq4_xs.cpp).
void gemm_few_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
void gemm_few_q6_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);
// The same for the signed 32-element block formats (Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4), 16 rows per pass
// (gemm_few_block32.cpp); every output equals the eight-row decode kernel's and the panels'.
template <DType W>
void gemm_few_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                      uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);

// Overwrites the slots above in `t`, which starts as the AVX2 table (the activation quantizers
// stay AVX2: they touch each activation once per matmul, a small share of the work).
void patch(KernelTable& t);

}  // namespace ox::kernels::avx512
