// Every weight format on bytes that llama.cpp's llama-quantize wrote (tests/data/format_parity,
// made by make_reference.sh there: a one-layer random tiny-256 llama, --pure, so every matrix is in
// the format), against llama.cpp's greedy ids and top-5 logits on the same file, on every kernel
// table: the format's dequantize, dot products and SIMD kernels all agree with llama.cpp's.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/model/model.h"
#include "core/quant/formats.h"
#include "kernels/kernels.h"
#include "tests/core/model/reference_check.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

// Both engines quantize every matmul's activations to Q8_0 / Q8_K with the same recipe, but from
// inputs that differ in the last bits (summation order), and an element that lands on the other
// side of a rounding boundary moves a logit by about one activation step times a weight: measured
// 0.0024 for one flip in the output matmul alone (a file whose only quantized tensor is
// output.weight, Q8_0: llama.cpp +0.0071 and oxidize +0.0047 against the same file with that
// tensor dequantized, where the two agree to 1e-4). With every layer matrix quantized, flips add
// up: measured 0.029-0.055 for Q4_0, Q4_K, IQ4_NL and IQ4_XS and 0.043-0.086 for the i-quants
// (IQ2_XXS the largest) on these logits of ~3-4, on the scalar, AVX2 and AVX-512 tables; so 0.15.
// A wrong grid entry, sign or scale moves logits by far more.
constexpr double kFormatTolerance = 0.15;

std::string file_stem(DType t) {
  std::string name = dtype_name(t);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "tests/data/format_parity/" + name;
}

// The quantized weight formats with a parity file.
std::vector<DType> formats_with_data() {
  std::vector<DType> out;
  for (DType t : weight_formats()) {
    if (format(t).role == FormatRole::kQuantized && test::file_exists(test::source_path(file_stem(t) + ".gguf"))) {
      out.push_back(t);
    }
  }
  return out;
}

TEST(FormatParityData, EveryFormatAfterTheKQuantsHasOne) {
  // GGUF ids from 16 on are the formats llama.cpp added after the K-quants (i-quants, ternary, MXFP4):
  // the ones this suite exists for.
  for (DType t : weight_formats()) {
    if (static_cast<uint32_t>(t) < 16 || format(t).role != FormatRole::kQuantized) continue;
    EXPECT_TRUE(test::file_exists(test::source_path(file_stem(t) + ".gguf")))
        << dtype_name(t) << ": no " << file_stem(t) << ".gguf (tests/data/format_parity/make_reference.sh)";
  }
}

using FormatTable = std::tuple<DType, const kernels::KernelTable*>;

class FormatParity : public ::testing::TestWithParam<FormatTable> {};

TEST_P(FormatParity, GreedyIdsAndLogitsAsLlamaCpp) {
  const DType type = std::get<0>(GetParam());
  const std::string stem = file_stem(type);
  auto file = gguf::GgufFile::open(test::source_path(stem + ".gguf"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  int in_format = 0;
  for (const gguf::TensorInfo& t : file.value()->tensors()) in_format += t.type == type ? 1 : 0;
  EXPECT_GE(in_format, 7) << stem << ": the matrices should be " << dtype_name(type) << " (--pure)";
  auto model = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const test::Reference ref = test::read_reference_file(test::source_path(stem + ".txt"));
  const test::ReferenceOutcome outcome = test::check_against_reference(
      *model.value(), ref, std::get<1>(GetParam()), Numerics::kF32, kFormatTolerance, dtype_name(type));
  EXPECT_TRUE(outcome.ids_ok) << dtype_name(type);
  std::printf("%s on %s: max |logit - llama.cpp| %.1e, %d near-ties\n", dtype_name(type), std::get<1>(GetParam())->isa,
              outcome.max_diff, outcome.near_ties);
}

INSTANTIATE_TEST_SUITE_P(Formats, FormatParity,
                         ::testing::Combine(::testing::ValuesIn(formats_with_data()),
                                            ::testing::ValuesIn(kernels::all_kernels())),
                         [](const ::testing::TestParamInfo<FormatTable>& info) {
                           std::string name = std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                              std::get<1>(info.param)->isa;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace ox
