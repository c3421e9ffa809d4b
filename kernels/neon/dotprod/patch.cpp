// Installs the SDOT kernels into a table that starts as the plain NEON one.
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/dotprod/gemm_lanes.h"
#include "kernels/neon/iquant_impl.h"

namespace ox::kernels::neon_dotprod {

void patch(KernelTable& t) {
  auto dot = [&](DType type, VecDotFn fn) { t.vec_dot[static_cast<uint32_t>(type)] = fn; };
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  t.isa = "neon-dotprod";
  install_vec_dots<DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::IQ4_NL, DType::MXFP4,
                   DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS, DType::TQ1_0,
                   DType::TQ2_0>(t);
  // The tile kernels: each family's file installs its formats' gemm slots.
  register_gemm_block32(t);
  register_gemm_kquant(t);
  // The codebook i-quants: instantiated here over their loaders (neon/iquant_load.h).
  neon_common::for_each_iquant([&](DType type, auto load) {
    using Load = decltype(load);
    dot(type, neon_common::iquant_q8_k<DotSdot, Load>);
    gemm(type, gemm_q8_k<Load>);
  });
}

}  // namespace ox::kernels::neon_dotprod
