// Installs the SIMD128 kernels into a table that starts as a copy of the scalar one.
#include "kernels/simd128/interleave.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

void patch(KernelTable& t) {
  auto dot = [&](DType type, VecDotFn fn) { t.vec_dot[static_cast<uint32_t>(type)] = fn; };
  auto tile = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  auto quant = [&](DType type, FromFloatFn fn) { t.quantize_row[static_cast<uint32_t>(type)] = fn; };
  t.isa = relaxed_active() ? "simd128+relaxed" : "simd128";
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
  tile(DType::F16, gemm_f16);
  tile(DType::Q4_0, gemm_q4_0);
  t.gemm_all_tokens[static_cast<uint32_t>(DType::Q4_0)] = true;  // gemm_block32.cpp: passes of tokens
  tile(DType::Q4_1, gemm_q4_1);
  tile(DType::Q5_0, gemm_q5_0);
  tile(DType::Q5_1, gemm_q5_1);
  tile(DType::Q8_0, gemm_q8_0);
  tile(DType::IQ4_NL, gemm_iq4_nl);
  tile(DType::MXFP4, gemm_mxfp4);
  tile(DType::Q2_K, gemm_q2_k);
  tile(DType::Q3_K, gemm_q3_k);
  tile(DType::Q4_K, gemm_q4_k);
  tile(DType::Q5_K, gemm_q5_k);
  tile(DType::Q6_K, gemm_q6_k);
  tile(DType::IQ4_XS, gemm_iq4_xs);
  tile(DType::TQ2_0, gemm_tq2_0);
  tile(DType::Q4_K_IL, gemm_q4_k_il);
  tile(DType::Q6_K_IL, gemm_q6_k_il);
  patch_iquants(t);
  patch_gemm_wide(t);
  // Where the relaxed bodies run, Q4_K and Q6_K weights are interleaved at load: their bodies for
  // the interleaved layouts take a sub-block pair's scales in one step (core/quant/interleave.h).
  // The SIMD128 bodies of those slots only stand in for them (they un-permute every row).
  if (relaxed_active()) {
    t.relayout[static_cast<uint32_t>(DType::Q4_K)] = {DType::Q4_K_IL, relayout_q4_k_il};
    t.relayout[static_cast<uint32_t>(DType::Q6_K)] = {DType::Q6_K_IL, relayout_q6_k_il};
  }
  quant(DType::Q8_0, quantize_row_q8_0);
  quant(DType::Q8_1, quantize_row_q8_1);
  quant(DType::Q8_K, quantize_row_q8_k);
  t.silu_mul = silu_mul;
  t.attn_softmax = attn_softmax;
  t.attn_accumulate = attn_accumulate;
  t.attn_accumulate_rows[static_cast<uint32_t>(DType::F16)] = attn_accumulate_rows_f16;
}

}  // namespace ox::kernels::simd128
