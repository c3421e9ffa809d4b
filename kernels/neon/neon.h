// NEON kernels (baseline armv8-a AArch64). Each function matches the scalar reference named in
// core/quant/traits.h (vec_dot_ref / from_float_ref of the same format); patch() installs them.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::neon {

// KernelTable::vec_dot[W], as avx2::vec_dot<W> (kernels/x86/avx2/avx2.h): one specialisation per
// format, in that format's file (float_dot.cpp, block32_dot.cpp, kquant_dot.cpp, tq_dot.cpp; the
// integer formats' bodies are neon_common's templates over DotNeon), installed by patch().
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

// The tile kernels (KernelTable::gemm, the GemmFn contract of kernels/kernels.h): one
// instantiation of neon_common's templates per format, installed by the file that owns them.
// gemm_block32.cpp: the 32-element block formats; gemm_kquant.cpp: the k-quants and IQ4_XS.
void register_gemm_block32(KernelTable& t);
void register_gemm_kquant(KernelTable& t);
// KernelTable::gemm_wide of F32, F16 and BF16 (gemm_wide.cpp): outer-product tiles for encoders'
// order-free passes.
void patch_gemm_wide(KernelTable& t);

// The activation quantizers of Q8_0, Q8_1 and Q8_K: one template (quantize.cpp), installed there.
void register_quantizers(KernelTable& t);

// Overwrites every slot above in `t` (which starts as a copy of the scalar table), and the
// vec_dot and gemm of the codebook i-quants, instantiated from iquant_load.h's registry.
void patch(KernelTable& t);

}  // namespace ox::kernels::neon
