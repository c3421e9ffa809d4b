// Installs the AVX2 kernels into a table that starts as a copy of the scalar one.
#include "kernels/x86/avx2/avx2.h"

namespace ox::kernels::avx2 {

void patch(KernelTable& t) {
  auto dot = [&](DType type, VecDotFn fn) { t.vec_dot[static_cast<uint32_t>(type)] = fn; };
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  auto quant = [&](DType type, FromFloatFn fn) { t.quantize_row[static_cast<uint32_t>(type)] = fn; };
  t.isa = "avx2";
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
  dot(DType::IQ2_XXS, vec_dot_iq2_xxs_q8_k);
  dot(DType::IQ2_XS, vec_dot_iq2_xs_q8_k);
  dot(DType::IQ2_S, vec_dot_iq2_s_q8_k);
  dot(DType::IQ3_XXS, vec_dot_iq3_xxs_q8_k);
  dot(DType::IQ3_S, vec_dot_iq3_s_q8_k);
  dot(DType::IQ1_S, vec_dot_iq1_s_q8_k);
  dot(DType::IQ1_M, vec_dot_iq1_m_q8_k);
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
