// quant_traits(): the table joining each format to its scalar references and to the activation
// format its dot product consumes (weights Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4 -> Q8_0, Q4_1/Q5_1 -> Q8_1,
// K-quants, IQ4_XS, TQ1_0 and TQ2_0 -> Q8_K, float formats -> themselves). None of MXFP4, TQ1_0
// and TQ2_0 has an importance-aware quantizer: llama.cpp's quantize_mxfp4 / quantize_tq1_0 /
// quantize_tq2_0 ignore quant_weights, so quantize_rows stays null for them.
#include "core/quant/traits.h"

#include <array>

#include "core/quant/interleave.h"
#include "core/quant/reference.h"

namespace ox {
namespace {

std::array<QuantTraits, kDTypeCount> make_table() {
  std::array<QuantTraits, kDTypeCount> t{};
  auto set = [&](DType type, ToFloatFn to_float, FromFloatFn from_float, DType dot_type, VecDotFn dot) {
    t[static_cast<uint32_t>(type)] = QuantTraits{to_float, from_float, dot_type, dot};
  };
  using namespace quant;
  set(DType::F32, dequantize_f32, quantize_f32, DType::F32, vec_dot_f32_f32);
  set(DType::F16, dequantize_f16, quantize_f16, DType::F16, vec_dot_f16_f16);
  set(DType::BF16, dequantize_bf16, quantize_bf16, DType::BF16, vec_dot_bf16_bf16);
  set(DType::Q4_0, dequantize_q4_0, quantize_q4_0, DType::Q8_0, vec_dot_q4_0_q8_0);
  set(DType::Q4_1, dequantize_q4_1, quantize_q4_1, DType::Q8_1, vec_dot_q4_1_q8_1);
  set(DType::Q5_0, dequantize_q5_0, quantize_q5_0, DType::Q8_0, vec_dot_q5_0_q8_0);
  set(DType::Q5_1, dequantize_q5_1, quantize_q5_1, DType::Q8_1, vec_dot_q5_1_q8_1);
  set(DType::Q8_0, dequantize_q8_0, quantize_q8_0, DType::Q8_0, vec_dot_q8_0_q8_0);
  // Activation-only formats: no dot product of their own (Q8_1 and Q8_K are never weights).
  set(DType::Q8_1, dequantize_q8_1, quantize_q8_1, DType::Q8_1, nullptr);
  set(DType::Q8_K, dequantize_q8_k, quantize_q8_k, DType::Q8_K, nullptr);
  set(DType::Q2_K, dequantize_q2_k, quantize_q2_k, DType::Q8_K, vec_dot_q2_k_q8_k);
  set(DType::Q3_K, dequantize_q3_k, quantize_q3_k, DType::Q8_K, vec_dot_q3_k_q8_k);
  set(DType::Q4_K, dequantize_q4_k, quantize_q4_k, DType::Q8_K, vec_dot_q4_k_q8_k);
  set(DType::Q5_K, dequantize_q5_k, quantize_q5_k, DType::Q8_K, vec_dot_q5_k_q8_k);
  set(DType::Q6_K, dequantize_q6_k, quantize_q6_k, DType::Q8_K, vec_dot_q6_k_q8_k);
  set(DType::IQ4_NL, dequantize_iq4_nl, quantize_iq4_nl, DType::Q8_0, vec_dot_iq4_nl_q8_0);
  set(DType::IQ4_XS, dequantize_iq4_xs, quantize_iq4_xs, DType::Q8_K, vec_dot_iq4_xs_q8_k);
  set(DType::MXFP4, dequantize_mxfp4, quantize_mxfp4, DType::Q8_0, vec_dot_mxfp4_q8_0);
  set(DType::TQ1_0, dequantize_tq1_0, quantize_tq1_0, DType::Q8_K, vec_dot_tq1_0_q8_k);
  set(DType::TQ2_0, dequantize_tq2_0, quantize_tq2_0, DType::Q8_K, vec_dot_tq2_0_q8_k);
  // Internal layouts: weights are converted to them at load, never quantized into them directly.
  set(DType::Q4_K_IL, dequantize_q4_k_il, nullptr, DType::Q8_K, vec_dot_q4_k_il_q8_k);
  set(DType::Q6_K_IL, dequantize_q6_k_il, nullptr, DType::Q8_K, vec_dot_q6_k_il_q8_k);
  return t;
}

const QuantTraits kNone{};

}  // namespace

void quantize_rows(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  const QuantTraits& t = quant_traits(type);
  if (t.quantize_rows != nullptr) {
    t.quantize_rows(x, y, n_rows, n_per_row, importance);
    return;
  }
  const uint64_t row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(n_per_row));
  for (int64_t r = 0; r < n_rows; ++r) {
    t.from_float_ref(x + r * n_per_row, static_cast<uint8_t*>(y) + static_cast<uint64_t>(r) * row_bytes, n_per_row);
  }
}

const QuantTraits& quant_traits(DType type) {
  static const std::array<QuantTraits, kDTypeCount> table = make_table();
  const uint32_t i = static_cast<uint32_t>(type);
  return i < kDTypeCount ? table[i] : kNone;
}

}  // namespace ox
