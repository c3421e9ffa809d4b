// vec_dot_ref against a float64 dot product of the dequantized weight row and the dequantized
// activation row, for every weight format, long rows and rows of a single block; and the traits
// table (activation format per weight format) as the design fixes it.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "tests/core/quant/quant_test_util.h"

namespace ox {
namespace {

struct DotCase {
  double got;
  double want;
  double tol;
};

// Quantizes Gaussian rows x (weights, format w) and y (activations, w's vec_dot_type).
DotCase run_dot(DType w, int64_t n, uint32_t seed) {
  const QuantTraits& tw = quant_traits(w);
  const DType a = tw.vec_dot_type;
  const std::vector<float> x = test::gaussian(static_cast<size_t>(n), seed);
  const std::vector<float> y = test::gaussian(static_cast<size_t>(n), seed + 1000, 2.0f);
  const std::vector<uint8_t> qx = test::quantize(w, x), qy = test::quantize(a, y);
  const std::vector<float> dx = test::dequantize(w, qx, x.size()), dy = test::dequantize(a, qy, y.size());
  DotCase c{};
  double abs_sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    c.want += static_cast<double>(dx[i]) * dy[i];
    abs_sum += std::fabs(static_cast<double>(dx[i]) * dy[i]);
  }
  // Float rounding of the per-block scale products and of the float accumulator: far below
  // 1e-5 of the sum of |products| for these lengths.
  c.tol = 1e-5 * abs_sum;
  if (a == DType::Q8_1) {
    // Q8_1 carries s = fp16(d * sum(q)) from the unrounded d, while the dequantized row sums to
    // fp16(d) * sum(q): the weight's m multiplies s, so allow 2^-9 relative on each m * s term.
    const size_t ts = dtype_facts(w).type_size;
    for (int64_t b = 0; b < n / 32; ++b) {
      const double m = test::half_value(test::load_u16(&qx[b * ts + 2]));
      double ysum = 0.0;
      for (int j = 0; j < 32; ++j) ysum += dy[b * 32 + j];
      c.tol += std::fabs(m * ysum) * 0x1p-9;
    }
  }
  float s = NAN;
  tw.vec_dot_ref(n, &s, qx.data(), qy.data());
  c.got = s;
  return c;
}

TEST(VecDot, MatchesFloat64DotOfDequantizedRows) {
  for (DType w : test::weight_formats()) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      const DotCase c = run_dot(w, 4096, seed);
      EXPECT_NEAR(c.got, c.want, c.tol) << dtype_name(w) << " seed " << seed;
    }
  }
}

TEST(VecDot, RowOfOneBlock) {
  for (DType w : test::weight_formats()) {
    const int64_t n = dtype_facts(w).block_size == 1 ? 32 : dtype_facts(w).block_size;
    const DotCase c = run_dot(w, n, 42);
    EXPECT_NEAR(c.got, c.want, c.tol) << dtype_name(w);
  }
}

TEST(VecDot, ZeroRowsGiveZero) {
  for (DType w : test::weight_formats()) {
    const QuantTraits& tw = quant_traits(w);
    const std::vector<float> zeros(512, 0.0f), y = test::gaussian(512, 3);
    const std::vector<uint8_t> qz = test::quantize(w, zeros), qy = test::quantize(tw.vec_dot_type, y);
    float s = NAN;
    tw.vec_dot_ref(512, &s, qz.data(), qy.data());
    EXPECT_EQ(s, 0.0f) << dtype_name(w);
    const std::vector<uint8_t> qx = test::quantize(w, y), qzy = test::quantize(tw.vec_dot_type, zeros);
    s = NAN;
    tw.vec_dot_ref(512, &s, qx.data(), qzy.data());
    EXPECT_EQ(s, 0.0f) << dtype_name(w);
  }
}

TEST(Traits, ActivationFormats) {
  const std::pair<DType, DType> expect[] = {
      {DType::F32, DType::F32},     {DType::F16, DType::F16},     {DType::BF16, DType::BF16},
      {DType::Q4_0, DType::Q8_0},   {DType::Q5_0, DType::Q8_0},   {DType::Q8_0, DType::Q8_0},
      {DType::IQ4_NL, DType::Q8_0}, {DType::Q4_1, DType::Q8_1},   {DType::Q5_1, DType::Q8_1},
      {DType::Q2_K, DType::Q8_K},   {DType::Q3_K, DType::Q8_K},   {DType::Q4_K, DType::Q8_K},
      {DType::Q5_K, DType::Q8_K},   {DType::Q6_K, DType::Q8_K},   {DType::IQ4_XS, DType::Q8_K},
      {DType::IQ2_XXS, DType::Q8_K}, {DType::IQ2_XS, DType::Q8_K}, {DType::IQ2_S, DType::Q8_K},
      {DType::IQ3_XXS, DType::Q8_K}, {DType::IQ3_S, DType::Q8_K}, {DType::IQ1_S, DType::Q8_K},
      {DType::IQ1_M, DType::Q8_K},
      {DType::MXFP4, DType::Q8_0},  {DType::TQ1_0, DType::Q8_K},  {DType::TQ2_0, DType::Q8_K},
  };
  for (const auto& [w, a] : expect) {
    const QuantTraits& t = quant_traits(w);
    EXPECT_EQ(t.vec_dot_type, a) << dtype_name(w);
    EXPECT_NE(t.to_float, nullptr) << dtype_name(w);
    // llama.cpp has no importance-free quantizer for IQ2_XXS / IQ2_XS: only quantize_rows, which
    // needs importance.
    const bool importance_only = w == DType::IQ2_XXS || w == DType::IQ2_XS || w == DType::IQ1_S || w == DType::IQ1_M;
    EXPECT_EQ(t.from_float_ref == nullptr, importance_only) << dtype_name(w);
    EXPECT_EQ(t.needs_importance, importance_only) << dtype_name(w);
    EXPECT_TRUE(t.from_float_ref != nullptr || t.quantize_rows != nullptr) << dtype_name(w);
    EXPECT_NE(t.vec_dot_ref, nullptr) << dtype_name(w);
    EXPECT_EQ(dtype_facts(w).block_size, dtype_facts(a).block_size == 1 ? 1u : dtype_facts(w).block_size)
        << dtype_name(w) << ": activation blocks must line up with weight blocks";
  }
  for (DType a : {DType::Q8_0, DType::Q8_1, DType::Q8_K}) {
    EXPECT_NE(quant_traits(a).from_float_ref, nullptr) << dtype_name(a);
    EXPECT_NE(quant_traits(a).to_float, nullptr) << dtype_name(a);
  }
  EXPECT_EQ(quant_traits(DType::I8).to_float, nullptr);  // integer tensors: no conversions
  // llama.cpp refuses IQ1_S without importance (IQ1_M: llama-quantize does); IQ3 takes it optionally.
  EXPECT_TRUE(quant_traits(DType::IQ1_S).needs_importance);
  EXPECT_TRUE(quant_traits(DType::IQ1_M).needs_importance);
  EXPECT_FALSE(quant_traits(DType::IQ3_XXS).needs_importance);
  EXPECT_FALSE(quant_traits(DType::IQ3_S).needs_importance);
  EXPECT_EQ(quant_traits(static_cast<DType>(1000)).vec_dot_ref, nullptr);
}

}  // namespace
}  // namespace ox
