// NEON (no SDOT) tile kernels of the 32-element block formats; bodies in neon/gemm_block32_impl.h.
#include "kernels/neon/gemm_block32_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;
using neon_common::gemm_block32;

void register_gemm_block32(KernelTable& t) {
  auto tile = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  tile(DType::Q4_0, gemm_block32<DotNeon, neon_common::LoadQ4_0>);
  tile(DType::Q4_1, gemm_block32<DotNeon, neon_common::LoadQ4_1>);
  tile(DType::Q5_0, gemm_block32<DotNeon, neon_common::LoadQ5_0>);
  tile(DType::Q5_1, gemm_block32<DotNeon, neon_common::LoadQ5_1>);
  tile(DType::Q8_0, gemm_block32<DotNeon, neon_common::LoadQ8_0>);
  tile(DType::IQ4_NL, gemm_block32<DotNeon, neon_common::LoadIQ4_NL>);
}

}  // namespace ox::kernels::neon
