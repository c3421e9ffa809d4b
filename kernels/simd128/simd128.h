// wasm SIMD128 kernels (relaxed SIMD only in relaxed_slots.h). Each function matches the scalar reference named in
// core/quant/traits.h (vec_dot_ref / from_float_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::simd128 {

// KernelTable::vec_dot[W], as avx2::vec_dot<W> (kernels/x86/avx2/avx2.h): one specialisation per
// format, in that format's file (float_dot.cpp, block32_dot.cpp, kquant_dot.cpp, tq_dot.cpp); the
// gemm files name vec_dot<W> where they fall back to dot products, and patch() installs them all.
// The codebook i-quants' vec_dot and gemm are installed together by patch_iquants (below).
template <DType W>
void vec_dot(int64_t n, float* s, const void* x, const void* y);
// Puts vec_dot<W> in t.vec_dot[W] for each W.
template <DType... W>
void install_vec_dots(KernelTable& t) {
  ((t.vec_dot[static_cast<uint32_t>(W)] = vec_dot<W>), ...);
}

// Rows of F16 / BF16 to f32 (KernelTable::to_float; exact).
void to_float_f16(const void* x, float* y, int64_t n);
void to_float_bf16(const void* x, float* y, int64_t n);
// to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; kv_to_float.cpp).
void patch_kv_to_float(KernelTable& t);

// The activation quantizers of Q8_0, Q8_1 and Q8_K: one template (quantize.cpp), installed there.
void register_quantizers(KernelTable& t);

// KernelTable::silu_mul; reference ox::silu_mul_ref, bit for bit.
void silu_mul(float* x, const float* y, int64_t n);
// KernelTable::attn_softmax / attn_accumulate (attention.cpp); references in core/base/attention_ref.h.
float attn_softmax(float* s, int64_t n, float scale, float* max);
void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);
void attn_accumulate_rows_f16(float* acc, const float* w, const uint8_t* v, uint64_t v_row_bytes, int64_t n,
                              int64_t dv);

// The tile kernels (KernelTable::gemm, the GemmFn contract of kernels.h), installed by the file
// that owns them, one line per format there. gemm_float.cpp: F16; gemm_block32.cpp: the 32-element
// block formats; gemm_kquant.cpp: the k-quants, IQ4_XS and the interleaved layouts Q4_K_IL /
// Q6_K_IL (core/quant/interleave.h: prefill through the same tiles, decode through relaxed_slots.h's
// q4_k_il_pairs / q6_k_il_pairs); tq_dot.cpp: TQ2_0 (one token through the tq2_0_pairs slot, more
// tokens vec_dot per row).
void register_gemm_float(KernelTable& t);
void register_gemm_block32(KernelTable& t);
void register_gemm_kquant(KernelTable& t);
void register_gemm_tq(KernelTable& t);
// KernelTable::gemm_wide of F32, F16 and BF16 (gemm_wide.cpp): outer-product tiles for encoders'
// order-free passes.
void patch_gemm_wide(KernelTable& t);
// The codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M): their vec_dot
// and gemm slots, one template instantiation per format (iquant.cpp).
void patch_iquants(KernelTable& t);

// Overwrites every slot above in `t` (which starts as a copy of the scalar table).
void patch(KernelTable& t);

}  // namespace ox::kernels::simd128
