// NEON kernels using SDOT (armv8.2-a +dotprod) for the integer formats. Each matches the scalar
// reference named in core/quant/traits.h; patch() installs them over the plain NEON table.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ox::kernels::neon_dotprod {

// KernelTable::vec_dot[W] with SDOT, as neon::vec_dot<W> (neon.h): one specialisation per integer
// format, in that format's file (block32_dot.cpp, kquant_dot.cpp, tq_dot.cpp), installed by patch().
template <DType W>
void vec_dot(int64_t n, float* s, const void* x, const void* y);
// Puts vec_dot<W> in t.vec_dot[W] for each W.
template <DType... W>
void install_vec_dots(KernelTable& t) {
  ((t.vec_dot[static_cast<uint32_t>(W)] = vec_dot<W>), ...);
}

// The tile kernels (KernelTable::gemm, the GemmFn contract of kernels/kernels.h), installed by the
// file that owns them: gemm_block32.cpp (the 32-element block formats), gemm_kquant.cpp (the
// k-quants and IQ4_XS).
void register_gemm_block32(KernelTable& t);
void register_gemm_kquant(KernelTable& t);

// Overwrites the integer dot products and tile kernels of `t` (those above, and the codebook
// i-quants' from iquant_load.h's registry), which starts as the NEON table
// (float formats and activation quantizers stay the plain NEON ones: SDOT does not apply to them).
void patch(KernelTable& t);

}  // namespace ox::kernels::neon_dotprod
