// Installs the SIMD128 kernels into a table that starts as a copy of the scalar one.
#include "kernels/simd128/interleave.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

void patch(KernelTable& t) {
  t.isa = relaxed_active() ? "simd128+relaxed" : "simd128";
  t.to_float[static_cast<uint32_t>(DType::F16)] = to_float_f16;
  t.to_float[static_cast<uint32_t>(DType::BF16)] = to_float_bf16;
  patch_kv_to_float(t);
  install_vec_dots<DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                   DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                   DType::Q6_K, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0>(t);
  // The tile kernels: each family's file installs its formats' gemm slots.
  register_gemm_float(t);
  register_gemm_block32(t);
  register_gemm_kquant(t);
  register_gemm_tq(t);
  patch_iquants(t);
  patch_gemm_wide(t);
  // Where the relaxed bodies run, Q4_K and Q6_K weights are interleaved at load: their bodies for
  // the interleaved layouts take a sub-block pair's scales in one step (core/quant/interleave.h);
  // Q2_K and Q3_K ones eight sub-blocks' scales.
  // The SIMD128 bodies of those slots only stand in for them (they un-permute every row).
  if (relaxed_active()) {
    t.relayout[static_cast<uint32_t>(DType::Q4_K)] = {DType::Q4_K_IL, relayout_q4_k_il};
    t.relayout[static_cast<uint32_t>(DType::Q6_K)] = {DType::Q6_K_IL, relayout_q6_k_il};
    t.relayout[static_cast<uint32_t>(DType::Q2_K)] = {DType::Q2_K_IL, relayout_q2_k_il};
    t.relayout[static_cast<uint32_t>(DType::Q3_K)] = {DType::Q3_K_IL, relayout_q3_k_il};
  }
  register_quantizers(t);
  t.silu_mul = silu_mul;
  t.attn_softmax = attn_softmax;
  t.attn_accumulate = attn_accumulate;
  t.attn_accumulate_rows[static_cast<uint32_t>(DType::F16)] = attn_accumulate_rows_f16;
}

}  // namespace ox::kernels::simd128
