// Installs the NEON kernels into a table that starts as a copy of the scalar one.
#include "kernels/neon/gemm_kquant_impl.h"
#include "kernels/neon/iquant_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

void patch(KernelTable& t) {
  auto dot = [&](DType type, VecDotFn fn) { t.vec_dot[static_cast<uint32_t>(type)] = fn; };
  auto quant = [&](DType type, FromFloatFn fn) { t.quantize_row[static_cast<uint32_t>(type)] = fn; };
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  t.isa = "neon";
  dot(DType::F32, vec_dot_f32);
  dot(DType::F16, vec_dot_f16);
  dot(DType::BF16, vec_dot_bf16);
  t.to_float[static_cast<uint32_t>(DType::F16)] = to_float_f16;
  t.to_float[static_cast<uint32_t>(DType::BF16)] = to_float_bf16;
  patch_kv_to_float(t);
  dot(DType::Q4_0, vec_dot_q4_0_q8_0);
  dot(DType::Q4_1, vec_dot_q4_1_q8_1);
  dot(DType::Q5_0, vec_dot_q5_0_q8_0);
  dot(DType::Q5_1, vec_dot_q5_1_q8_1);
  dot(DType::Q8_0, vec_dot_q8_0_q8_0);
  dot(DType::IQ4_NL, vec_dot_iq4_nl_q8_0);
  dot(DType::Q2_K, vec_dot_q2_k_q8_k);
  dot(DType::Q3_K, vec_dot_q3_k_q8_k);
  dot(DType::Q4_K, vec_dot_q4_k_q8_k);
  dot(DType::Q5_K, vec_dot_q5_k_q8_k);
  dot(DType::Q6_K, vec_dot_q6_k_q8_k);
  dot(DType::IQ4_XS, vec_dot_iq4_xs_q8_k);
  dot(DType::MXFP4, vec_dot_mxfp4_q8_0);
  dot(DType::TQ1_0, vec_dot_tq1_0_q8_k);
  dot(DType::TQ2_0, vec_dot_tq2_0_q8_k);
  gemm(DType::Q4_0, gemm_q4_0_q8_0);
  gemm(DType::Q4_1, gemm_q4_1_q8_1);
  gemm(DType::Q5_0, gemm_q5_0_q8_0);
  gemm(DType::Q5_1, gemm_q5_1_q8_1);
  gemm(DType::Q8_0, gemm_q8_0_q8_0);
  gemm(DType::IQ4_NL, gemm_iq4_nl_q8_0);
  gemm(DType::Q2_K, gemm_q2_k_q8_k);
  gemm(DType::Q3_K, gemm_q3_k_q8_k);
  gemm(DType::Q4_K, gemm_q4_k_q8_k);
  gemm(DType::Q5_K, gemm_q5_k_q8_k);
  gemm(DType::Q6_K, gemm_q6_k_q8_k);
  gemm(DType::IQ4_XS, gemm_iq4_xs_q8_k);
  patch_gemm_wide(t);
  // The codebook i-quants: instantiated here over their loaders (neon/iquant_load.h).
  neon_common::for_each_iquant([&](DType type, auto load) {
    using Load = decltype(load);
    dot(type, neon_common::iquant_q8_k<neon_common::DotNeon, Load>);
    gemm(type, neon_common::gemm_kquant<neon_common::DotNeon, Load>);
  });
  quant(DType::Q8_0, quantize_row_q8_0);
  quant(DType::Q8_1, quantize_row_q8_1);
  quant(DType::Q8_K, quantize_row_q8_k);
}

}  // namespace ox::kernels::neon
