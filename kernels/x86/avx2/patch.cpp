// Installs the AVX2 kernels into a table that starts as a copy of the scalar one.
#include "kernels/x86/avx2/avx2.h"

namespace ox::kernels::avx2 {

void patch(KernelTable& t) {
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  auto quant = [&](DType type, FromFloatFn fn) { t.quantize_row[static_cast<uint32_t>(type)] = fn; };
  t.isa = "avx2";
  t.to_float[static_cast<uint32_t>(DType::F16)] = to_float_f16;
  t.to_float[static_cast<uint32_t>(DType::BF16)] = to_float_bf16;
  patch_kv_to_float(t);
  install_vec_dots<DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                   DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                   DType::Q6_K, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0, DType::IQ2_XXS, DType::IQ2_XS,
                   DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M>(t);
  // The tile kernels: each family's file installs its formats' gemm and gemm_few slots.
  register_gemm_float(t);
  register_gemm_block32(t);
  register_gemm_kquant(t);
  register_gemm_iq(t);
  register_gemm_tq(t);
  quant(DType::F16, quantize_row_f16);
  register_quantizers(t);
  t.silu_mul = silu_mul;
  t.gelu = gelu;
  t.attn_accumulate = attn_accumulate;
  t.attn_softmax = attn_softmax;
  gemm(DType::F16, gemm_f16);  // the AVX-512 table keeps this one (it starts as a copy of this table)
}

}  // namespace ox::kernels::avx2
