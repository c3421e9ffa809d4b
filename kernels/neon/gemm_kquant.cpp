// NEON (no SDOT) tile kernels of the K-quants and IQ4_XS; bodies in neon/gemm_kquant_impl.h.
#include "kernels/neon/gemm_kquant_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;
using neon_common::gemm_kquant;

void register_gemm_kquant(KernelTable& t) {
  auto tile = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  tile(DType::Q2_K, gemm_kquant<DotNeon, neon_common::LoadQ2_K>);
  tile(DType::Q3_K, gemm_kquant<DotNeon, neon_common::LoadQ3_K>);
  tile(DType::Q4_K, gemm_kquant<DotNeon, neon_common::LoadQ4_K>);
  tile(DType::Q5_K, gemm_kquant<DotNeon, neon_common::LoadQ5_K>);
  tile(DType::Q6_K, gemm_kquant<DotNeon, neon_common::LoadQ6_K>);
  tile(DType::IQ4_XS, gemm_kquant<DotNeon, neon_common::LoadIQ4_XS>);
}

}  // namespace ox::kernels::neon
