// The format registry's rows agree with each other and with GGUF: ids in place, names that parse
// back, byte counts GGUF states (ggml.c's type_traits, written out here independently of the
// block structs the registry reads), activation formats that can quantize, fallbacks that fit.
#include "core/quant/formats.h"

#include <algorithm>
#include <cstring>
#include <vector>
#include <string>

#include <gtest/gtest.h>

#include "core/quant/traits.h"

namespace ox {
namespace {

TEST(Formats, RowsSitAtTheirIds) {
  ASSERT_EQ(formats().size(), kDTypeCount);
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    const Format& f = formats()[i];
    if (f.role == FormatRole::kUnknown) continue;
    EXPECT_EQ(static_cast<uint32_t>(f.type), i) << f.facts.name;
    EXPECT_EQ(&format(f.type), &f) << f.facts.name;
  }
}

TEST(Formats, BlockSizesAndBytesAsGgufStatesThem) {
  // (name, elements per block, bytes per block) from llama.cpp v0.5.0's ggml.c type_traits.
  struct Gguf {
    DType type;
    const char* name;
    uint32_t block_size, type_size;
  };
  const Gguf gguf[] = {
      {DType::F32, "F32", 1, 4},          {DType::F16, "F16", 1, 2},           {DType::Q4_0, "Q4_0", 32, 18},
      {DType::Q4_1, "Q4_1", 32, 20},      {DType::Q5_0, "Q5_0", 32, 22},       {DType::Q5_1, "Q5_1", 32, 24},
      {DType::Q8_0, "Q8_0", 32, 34},      {DType::Q8_1, "Q8_1", 32, 36},       {DType::Q2_K, "Q2_K", 256, 84},
      {DType::Q3_K, "Q3_K", 256, 110},    {DType::Q4_K, "Q4_K", 256, 144},     {DType::Q5_K, "Q5_K", 256, 176},
      {DType::Q6_K, "Q6_K", 256, 210},    {DType::Q8_K, "Q8_K", 256, 292},     {DType::IQ2_XXS, "IQ2_XXS", 256, 66},
      {DType::IQ2_XS, "IQ2_XS", 256, 74}, {DType::IQ3_XXS, "IQ3_XXS", 256, 98}, {DType::IQ1_S, "IQ1_S", 256, 50},
      {DType::IQ4_NL, "IQ4_NL", 32, 18},  {DType::IQ3_S, "IQ3_S", 256, 110},   {DType::IQ2_S, "IQ2_S", 256, 82},
      {DType::IQ4_XS, "IQ4_XS", 256, 136}, {DType::I8, "I8", 1, 1},            {DType::I16, "I16", 1, 2},
      {DType::I32, "I32", 1, 4},          {DType::I64, "I64", 1, 8},           {DType::F64, "F64", 1, 8},
      {DType::IQ1_M, "IQ1_M", 256, 56},   {DType::BF16, "BF16", 1, 2},         {DType::TQ1_0, "TQ1_0", 256, 54},
      {DType::TQ2_0, "TQ2_0", 256, 66},   {DType::MXFP4, "MXFP4", 32, 17},     {DType::NVFP4, "NVFP4", 64, 36},
      {DType::Q1_0, "Q1_0", 128, 18},     {DType::Q2_0, "Q2_0", 64, 18},
  };
  int known = 0;
  for (const Format& f : formats()) known += f.facts.known ? 1 : 0;
  EXPECT_EQ(known, static_cast<int>(std::size(gguf)));
  for (const Gguf& g : gguf) {
    const Format& f = format(g.type);
    EXPECT_TRUE(f.facts.known) << g.name;
    EXPECT_STREQ(f.facts.name, g.name);
    EXPECT_EQ(f.facts.block_size, g.block_size) << g.name;
    EXPECT_EQ(f.facts.type_size, g.type_size) << g.name;
    DType parsed{};
    ASSERT_TRUE(dtype_from_name(g.name, &parsed)) << g.name;
    EXPECT_EQ(parsed, g.type);
  }
}

TEST(Formats, WeightFormatsHaveEveryReference) {
  ASSERT_FALSE(weight_formats().empty());
  for (DType t : weight_formats(/*with_internal_layouts=*/true)) {
    const Format& f = format(t);
    EXPECT_TRUE(f.facts.supported) << f.facts.name;
    // The activation side must be quantizable, or no matmul could feed the dot product.
    const Format& a = format(f.traits.vec_dot_type);
    EXPECT_NE(a.traits.from_float_ref, nullptr) << f.facts.name << " pairs with " << a.facts.name;
    if (f.role != FormatRole::kFloat) {
      EXPECT_EQ(f.facts.block_size % a.facts.block_size, 0u) << f.facts.name;
    }
    if (f.traits.needs_importance) {
      EXPECT_NE(f.traits.quantize_rows, nullptr) << f.facts.name;
    }
  }
  const std::vector<DType> weights = weight_formats();
  for (DType t : {DType::Q8_1, DType::Q8_K}) {
    EXPECT_EQ(format(t).role, FormatRole::kActivation);
    EXPECT_EQ(std::count(weights.begin(), weights.end(), t), 0);
  }
}

TEST(Formats, RowFallbacksAreSmallerBlocksThatCompute) {
  for (const Format& f : formats()) {
    if (!is_weight_format(f) || f.role == FormatRole::kInternal) continue;
    const Format& fb = format(f.row_fallback);
    EXPECT_TRUE(is_weight_format(fb)) << f.facts.name << " -> " << fb.facts.name;
    EXPECT_LE(fb.facts.block_size, 32u) << f.facts.name;
  }
  EXPECT_EQ(format(DType::Q4_K).row_fallback, DType::Q5_0);
  EXPECT_EQ(format(DType::IQ4_XS).row_fallback, DType::IQ4_NL);
}

TEST(Formats, ScaleOffsetsPointAtAHalfThatScalesTheBlock) {
  // Doubling the fp16 value at d_offset doubles every dequantized element of a symmetric block.
  for (DType t : weight_formats(true)) {
    const Format& f = format(t);
    if (f.d_offset < 0 || f.min_offset >= 0) continue;
    std::vector<float> x(f.facts.block_size);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
    std::vector<uint8_t> q(f.facts.type_size);
    if (f.role == FormatRole::kInternal) continue;  // quantized through its file format only
    quantize_rows_uniform(t, x.data(), q.data(), 1, static_cast<int64_t>(x.size()));
    std::vector<float> before(x.size()), after(x.size());
    f.traits.to_float(q.data(), before.data(), static_cast<int64_t>(x.size()));
    uint16_t h;
    std::memcpy(&h, q.data() + f.d_offset, 2);
    h = f32_to_fp16(2.0f * fp16_to_f32(h));
    std::memcpy(q.data() + f.d_offset, &h, 2);
    f.traits.to_float(q.data(), after.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(after[i], 2.0f * before[i]) << f.facts.name << " element " << i;
  }
}

TEST(Formats, InternalLayoutsNameTheirFileFormat) {
  EXPECT_EQ(dtype_file_type(DType::Q4_K_IL), DType::Q4_K);
  EXPECT_EQ(dtype_file_type(DType::Q6_K_IL), DType::Q6_K);
  EXPECT_EQ(dtype_file_type(DType::IQ4_XS), DType::IQ4_XS);
  EXPECT_FALSE(dtype_is_known(static_cast<uint32_t>(DType::Q4_K_IL)));
  EXPECT_EQ(format(static_cast<DType>(kDTypeCount + 5)).role, FormatRole::kUnknown);
}

}  // namespace
}  // namespace ox
