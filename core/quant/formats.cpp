// The registry's rows. Bytes per block come from the block structs (blocks.h asserts each against
// GGUF's figure), so a layout and its size cannot disagree.
#include "core/quant/formats.h"

#include <array>
#include <cstddef>

#include "core/quant/blocks.h"
#include "core/quant/interleave.h"
#include "core/quant/reference.h"

namespace ox {
namespace {

using namespace quant;

// The scalar references of one format; `dot` is the activation format its vec_dot consumes.
struct Refs {
  ToFloatFn to_float = nullptr;
  FromFloatFn from_float = nullptr;
  DType dot = DType::F32;
  VecDotFn vec_dot = nullptr;
  QuantizeRowsFn quantize_rows = nullptr;
  bool needs_importance = false;
};

// Where a block's fp16 multipliers sit.
struct Scales {
  int16_t d = -1;
  int16_t min = -1;
};

#define OX_OFFSET(Block, field) static_cast<int16_t>(offsetof(Block, field))

class Table {
 public:
  constexpr Table() {
    for (uint32_t i = 0; i < kDTypeCount; ++i) {
      const DType t = static_cast<DType>(i);
      rows_[i] = Format{t, FormatRole::kUnknown, {"unknown", 1, 0, false, false}};
      rows_[i].file_type = t;
    }
  }

  // A format described by name and size only: GGUF defines it, this engine cannot compute with it.
  constexpr void known(DType t, FormatRole role, const char* name, uint32_t block_size, uint32_t type_size) {
    rows_[static_cast<uint32_t>(t)] = Format{t, role, {name, block_size, type_size, true, false}};
    rows_[static_cast<uint32_t>(t)].file_type = t;
  }

  // A float format: one element per "block".
  template <typename Element>
  constexpr void floating(DType t, const char* name, Refs r) {
    put(t, FormatRole::kFloat, name, 1, sizeof(Element), true, r, {}, DType::F16);
  }

  // A block format with its references; `fallback` as Format::row_fallback.
  template <typename Block>
  constexpr void block(DType t, FormatRole role, const char* name, uint32_t block_size, Refs r, Scales s,
                       DType fallback = DType::F16) {
    put(t, role, name, block_size, sizeof(Block), role != FormatRole::kInternal, r, s, fallback);
  }

  // Marks `t` as an internal re-layout of the GGUF format `of`.
  constexpr void layout_of(DType t, DType of) { rows_[static_cast<uint32_t>(t)].file_type = of; }

  const Format& operator[](uint32_t i) const { return rows_[i]; }
  constexpr const std::array<Format, kDTypeCount>& rows() const { return rows_; }

 private:
  constexpr void put(DType t, FormatRole role, const char* name, uint32_t block_size, uint32_t type_size, bool known,
                     Refs r, Scales s, DType fallback) {
    const bool supported = r.to_float != nullptr;
    rows_[static_cast<uint32_t>(t)] =
        Format{t,
               role,
               {name, block_size, type_size, known, supported},
               {r.to_float, r.from_float, r.dot, r.vec_dot, r.quantize_rows, r.needs_importance},
               s.d,
               s.min,
               fallback,
               t};
  }

  std::array<Format, kDTypeCount> rows_{};
};

constexpr Table make_table() {
  Table t;
  constexpr auto Q = FormatRole::kQuantized;
  // Float formats: weights, activations and KV cache; each is its own dot-product partner.
  t.floating<float>(DType::F32, "F32", {dequantize_f32, quantize_f32, DType::F32, vec_dot_f32_f32});
  t.floating<uint16_t>(DType::F16, "F16", {dequantize_f16, quantize_f16, DType::F16, vec_dot_f16_f16});
  t.floating<uint16_t>(DType::BF16, "BF16", {dequantize_bf16, quantize_bf16, DType::BF16, vec_dot_bf16_bf16});

  // 32-element formats. Symmetric ones pair with Q8_0 activations, those with a min with Q8_1.
  t.block<BlockQ4_0>(DType::Q4_0, Q, "Q4_0", kQK4_0, {dequantize_q4_0, quantize_q4_0, DType::Q8_0, vec_dot_q4_0_q8_0, quantize_rows_q4_0},
                     {OX_OFFSET(BlockQ4_0, d)});
  t.block<BlockQ4_1>(DType::Q4_1, Q, "Q4_1", kQK4_1, {dequantize_q4_1, quantize_q4_1, DType::Q8_1, vec_dot_q4_1_q8_1, quantize_rows_q4_1},
                     {OX_OFFSET(BlockQ4_1, d), OX_OFFSET(BlockQ4_1, m)});
  t.block<BlockQ5_0>(DType::Q5_0, Q, "Q5_0", kQK5_0, {dequantize_q5_0, quantize_q5_0, DType::Q8_0, vec_dot_q5_0_q8_0, quantize_rows_q5_0},
                     {OX_OFFSET(BlockQ5_0, d)});
  t.block<BlockQ5_1>(DType::Q5_1, Q, "Q5_1", kQK5_1, {dequantize_q5_1, quantize_q5_1, DType::Q8_1, vec_dot_q5_1_q8_1, quantize_rows_q5_1},
                     {OX_OFFSET(BlockQ5_1, d), OX_OFFSET(BlockQ5_1, m)});
  t.block<BlockQ8_0>(DType::Q8_0, Q, "Q8_0", kQK8_0, {dequantize_q8_0, quantize_q8_0, DType::Q8_0, vec_dot_q8_0_q8_0, quantize_rows_q8_0},
                     {OX_OFFSET(BlockQ8_0, d)});
  t.block<BlockIQ4_NL>(DType::IQ4_NL, Q, "IQ4_NL", kQK4_NL,
                       {dequantize_iq4_nl, quantize_iq4_nl, DType::Q8_0, vec_dot_iq4_nl_q8_0, quantize_rows_iq4_nl},
                       {OX_OFFSET(BlockIQ4_NL, d)});

  // Activation-only formats: no dot product of their own.
  t.block<BlockQ8_1>(DType::Q8_1, FormatRole::kActivation, "Q8_1", kQK8_1,
                     {dequantize_q8_1, quantize_q8_1, DType::Q8_1, nullptr}, {OX_OFFSET(BlockQ8_1, d)});
  t.block<BlockQ8_K>(DType::Q8_K, FormatRole::kActivation, "Q8_K", kQK_K,
                     {dequantize_q8_k, quantize_q8_k, DType::Q8_K, nullptr}, {});

  // 256-element super-blocks, paired with Q8_K. The fallbacks are llama.cpp's for rows that are
  // not a multiple of 256.
  t.block<BlockQ2_K>(DType::Q2_K, Q, "Q2_K", kQK_K, {dequantize_q2_k, quantize_q2_k, DType::Q8_K, vec_dot_q2_k_q8_k, quantize_rows_q2_k},
                     {OX_OFFSET(BlockQ2_K, d), OX_OFFSET(BlockQ2_K, dmin)}, DType::Q4_0);
  t.block<BlockQ3_K>(DType::Q3_K, Q, "Q3_K", kQK_K, {dequantize_q3_k, quantize_q3_k, DType::Q8_K, vec_dot_q3_k_q8_k, quantize_rows_q3_k},
                     {OX_OFFSET(BlockQ3_K, d)}, DType::Q4_0);
  t.block<BlockQ4_K>(DType::Q4_K, Q, "Q4_K", kQK_K, {dequantize_q4_k, quantize_q4_k, DType::Q8_K, vec_dot_q4_k_q8_k, quantize_rows_q4_k},
                     {OX_OFFSET(BlockQ4_K, d), OX_OFFSET(BlockQ4_K, dmin)}, DType::Q5_0);
  t.block<BlockQ5_K>(DType::Q5_K, Q, "Q5_K", kQK_K, {dequantize_q5_k, quantize_q5_k, DType::Q8_K, vec_dot_q5_k_q8_k, quantize_rows_q5_k},
                     {OX_OFFSET(BlockQ5_K, d), OX_OFFSET(BlockQ5_K, dmin)}, DType::Q5_1);
  t.block<BlockQ6_K>(DType::Q6_K, Q, "Q6_K", kQK_K, {dequantize_q6_k, quantize_q6_k, DType::Q8_K, vec_dot_q6_k_q8_k, quantize_rows_q6_k},
                     {OX_OFFSET(BlockQ6_K, d)}, DType::Q8_0);
  t.block<BlockIQ4_XS>(DType::IQ4_XS, Q, "IQ4_XS", kQK_K,
                       {dequantize_iq4_xs, quantize_iq4_xs, DType::Q8_K, vec_dot_iq4_xs_q8_k, quantize_rows_iq4_xs},
                       {OX_OFFSET(BlockIQ4_XS, d)}, DType::IQ4_NL);

  // OCP MXFP4: E2M1 codes under one E8M0 exponent byte (no fp16 scale), paired with Q8_0.
  t.block<BlockMXFP4>(DType::MXFP4, Q, "MXFP4", kQKMXFP4, {dequantize_mxfp4, quantize_mxfp4, DType::Q8_0, vec_dot_mxfp4_q8_0},
                      {});
  // Ternary (BitNet b1.58) formats, paired with Q8_K; rows that are not a multiple of 256 take Q4_0.
  t.block<BlockTQ1_0>(DType::TQ1_0, Q, "TQ1_0", kQK_K, {dequantize_tq1_0, quantize_tq1_0, DType::Q8_K, vec_dot_tq1_0_q8_k},
                      {OX_OFFSET(BlockTQ1_0, d)}, DType::Q4_0);
  t.block<BlockTQ2_0>(DType::TQ2_0, Q, "TQ2_0", kQK_K, {dequantize_tq2_0, quantize_tq2_0, DType::Q8_K, vec_dot_tq2_0_q8_k},
                      {OX_OFFSET(BlockTQ2_0, d)}, DType::Q4_0);

  // Codebook i-quants, paired with Q8_K; llama.cpp quantizes IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M only
  // with an importance matrix. Rows that are not a multiple of 256 fall back to IQ4_NL.
  t.block<BlockIQ2_XXS>(DType::IQ2_XXS, Q, "IQ2_XXS", kQK_K,
                        {dequantize_iq2_xxs, nullptr, DType::Q8_K, vec_dot_iq2_xxs_q8_k, quantize_rows_iq2_xxs, true},
                        {OX_OFFSET(BlockIQ2_XXS, d)}, DType::IQ4_NL);
  t.block<BlockIQ2_XS>(DType::IQ2_XS, Q, "IQ2_XS", kQK_K,
                       {dequantize_iq2_xs, nullptr, DType::Q8_K, vec_dot_iq2_xs_q8_k, quantize_rows_iq2_xs, true},
                       {OX_OFFSET(BlockIQ2_XS, d)}, DType::IQ4_NL);
  t.block<BlockIQ2_S>(DType::IQ2_S, Q, "IQ2_S", kQK_K,
                      {dequantize_iq2_s, quantize_iq2_s, DType::Q8_K, vec_dot_iq2_s_q8_k, quantize_rows_iq2_s, false},
                      {OX_OFFSET(BlockIQ2_S, d)}, DType::IQ4_NL);

  t.block<BlockIQ3_XXS>(DType::IQ3_XXS, Q, "IQ3_XXS", kQK_K,
                        {dequantize_iq3_xxs, quantize_iq3_xxs, DType::Q8_K, vec_dot_iq3_xxs_q8_k, quantize_rows_iq3_xxs},
                        {OX_OFFSET(BlockIQ3_XXS, d)}, DType::IQ4_NL);
  t.block<BlockIQ3_S>(DType::IQ3_S, Q, "IQ3_S", kQK_K,
                      {dequantize_iq3_s, quantize_iq3_s, DType::Q8_K, vec_dot_iq3_s_q8_k, quantize_rows_iq3_s},
                      {OX_OFFSET(BlockIQ3_S, d)}, DType::IQ4_NL);
  t.block<BlockIQ1_S>(DType::IQ1_S, Q, "IQ1_S", kQK_K,
                      {dequantize_iq1_s, nullptr, DType::Q8_K, vec_dot_iq1_s_q8_k, quantize_rows_iq1_s, true},
                      {OX_OFFSET(BlockIQ1_S, d)}, DType::IQ4_NL);
  // IQ1_M's fp16 scale is spread over the top nibbles of its scales (blocks.h): no d field.
  t.block<BlockIQ1_M>(DType::IQ1_M, Q, "IQ1_M", kQK_K,
                      {dequantize_iq1_m, nullptr, DType::Q8_K, vec_dot_iq1_m_q8_k, quantize_rows_iq1_m, true}, {},
                      DType::IQ4_NL);

  // Defined by GGUF, not computed with (yet).
  t.known(DType::NVFP4, Q, "NVFP4", 64, 4 + 32);
  t.known(DType::Q1_0, Q, "Q1_0", 128, 2 + 16);
  t.known(DType::Q2_0, Q, "Q2_0", 64, 2 + 16);
  t.known(DType::I8, FormatRole::kInteger, "I8", 1, 1);
  t.known(DType::I16, FormatRole::kInteger, "I16", 1, 2);
  t.known(DType::I32, FormatRole::kInteger, "I32", 1, 4);
  t.known(DType::I64, FormatRole::kInteger, "I64", 1, 8);
  t.known(DType::F64, FormatRole::kInteger, "F64", 1, 8);

  // Internal layouts (interleave.h): weights are converted to them at load, never quantized into them.
  t.block<BlockQ4_K>(DType::Q4_K_IL, FormatRole::kInternal, "Q4_K_IL", kQK_K,
                     {dequantize_q4_k_il, nullptr, DType::Q8_K, vec_dot_q4_k_il_q8_k},
                     {OX_OFFSET(BlockQ4_K, d), OX_OFFSET(BlockQ4_K, dmin)});
  t.block<BlockQ6_K>(DType::Q6_K_IL, FormatRole::kInternal, "Q6_K_IL", kQK_K,
                     {dequantize_q6_k_il, nullptr, DType::Q8_K, vec_dot_q6_k_il_q8_k}, {OX_OFFSET(BlockQ6_K, d)});
  t.block<BlockQ2_K>(DType::Q2_K_IL, FormatRole::kInternal, "Q2_K_IL", kQK_K,
                     {dequantize_q2_k_il, nullptr, DType::Q8_K, vec_dot_q2_k_il_q8_k},
                     {OX_OFFSET(BlockQ2_K, d), OX_OFFSET(BlockQ2_K, dmin)});
  t.block<BlockQ3_K>(DType::Q3_K_IL, FormatRole::kInternal, "Q3_K_IL", kQK_K,
                     {dequantize_q3_k_il, nullptr, DType::Q8_K, vec_dot_q3_k_il_q8_k}, {OX_OFFSET(BlockQ3_K, d)});
  t.layout_of(DType::Q4_K_IL, DType::Q4_K);
  t.layout_of(DType::Q6_K_IL, DType::Q6_K);
  t.layout_of(DType::Q2_K_IL, DType::Q2_K);
  t.layout_of(DType::Q3_K_IL, DType::Q3_K);
  return t;
}

#undef OX_OFFSET

constexpr Table kTable = make_table();
constexpr Format kUnknownId{DType::F32, FormatRole::kUnknown, {"unknown", 1, 0, false, false}, {}, -1, -1, DType::F16, DType::F32};

}  // namespace

std::span<const Format> formats() { return kTable.rows(); }

const Format& format(DType type) {
  const uint32_t i = static_cast<uint32_t>(type);
  return i < kDTypeCount ? kTable[i] : kUnknownId;
}

bool is_weight_format(const Format& f) {
  const QuantTraits& t = f.traits;
  const bool role = f.role == FormatRole::kFloat || f.role == FormatRole::kQuantized || f.role == FormatRole::kInternal;
  const bool quantizable = t.from_float_ref != nullptr || t.quantize_rows != nullptr || f.role == FormatRole::kInternal;
  return role && t.to_float != nullptr && t.vec_dot_ref != nullptr && quantizable;
}

std::vector<DType> weight_formats(bool with_internal_layouts) {
  std::vector<DType> out;
  for (const Format& f : formats()) {
    if (is_weight_format(f) && (with_internal_layouts || f.role != FormatRole::kInternal)) out.push_back(f.type);
  }
  return out;
}

std::vector<DType> activation_formats() {
  bool used[kDTypeCount] = {};
  for (const Format& f : formats()) {
    if (is_weight_format(f)) used[static_cast<uint32_t>(f.traits.vec_dot_type)] = true;
  }
  std::vector<DType> out;
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    if (used[i]) out.push_back(static_cast<DType>(i));
  }
  return out;
}

}  // namespace ox
