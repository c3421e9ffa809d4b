// SDOT (armv8.2-a +dotprod) tile kernels of the K-quants and IQ4_XS: the lane tiles of
// dotprod/gemm_lanes.h for groups of 4 tokens, neon/gemm_kquant_impl.h's for the rest.
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/dotprod/gemm_lanes.h"

namespace ox::kernels::neon_dotprod {

void register_gemm_kquant(KernelTable& t) {
  auto tile = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  tile(DType::Q2_K, gemm_q8_k<neon_common::LoadQ2_K>);
  tile(DType::Q3_K, gemm_q8_k<neon_common::LoadQ3_K>);
  tile(DType::Q4_K, gemm_q8_k<neon_common::LoadQ4_K>);
  tile(DType::Q5_K, gemm_q8_k<neon_common::LoadQ5_K>);
  tile(DType::Q6_K, gemm_q8_k<neon_common::LoadQ6_K>);
  tile(DType::IQ4_XS, gemm_q8_k<neon_common::LoadIQ4_XS>);
}

}  // namespace ox::kernels::neon_dotprod
