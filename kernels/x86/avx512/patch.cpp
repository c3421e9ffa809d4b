// Installs the AVX-512 kernels into a table that starts as the AVX2 one.
#include "kernels/x86/avx512/avx512.h"

namespace ox::kernels::avx512 {

void patch(KernelTable& t) {
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  t.isa = "avx512";
  t.attn_accumulate = attn_accumulate;
  t.gelu = gelu;
  gemm(DType::F16, gemm_f16);
  install_vec_dots<DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                   DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                   DType::Q6_K, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0>(t);
  // The tile kernels: each family's file installs its formats' gemm and gemm_few slots.
  register_gemm_float(t);
  register_gemm_block32(t);
  register_gemm_kquant(t);
  register_gemm_iq(t);
  register_gemm_tq(t);
}

}  // namespace ox::kernels::avx512
