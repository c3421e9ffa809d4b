// Installs the NEON kernels into a table that starts as a copy of the scalar one.
#include "kernels/neon/gemm_kquant_impl.h"
#include "kernels/neon/iquant_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

void patch(KernelTable& t) {
  auto dot = [&](DType type, VecDotFn fn) { t.vec_dot[static_cast<uint32_t>(type)] = fn; };
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  t.isa = "neon";
  t.to_float[static_cast<uint32_t>(DType::F16)] = to_float_f16;
  t.to_float[static_cast<uint32_t>(DType::BF16)] = to_float_bf16;
  patch_kv_to_float(t);
  install_vec_dots<DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                   DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                   DType::Q6_K, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0>(t);
  // The tile kernels: each family's file installs its formats' gemm slots.
  register_gemm_block32(t);
  register_gemm_kquant(t);
  patch_gemm_wide(t);
  // The codebook i-quants: instantiated here over their loaders (neon/iquant_load.h).
  neon_common::for_each_iquant([&](DType type, auto load) {
    using Load = decltype(load);
    dot(type, neon_common::iquant_q8_k<neon_common::DotNeon, Load>);
    gemm(type, neon_common::gemm_kquant<neon_common::DotNeon, Load>);
  });
  register_quantizers(t);
}

}  // namespace ox::kernels::neon
