// The importance-aware quantizers of the 32-element formats, the K-quants and IQ4_NL / IQ4_XS
// against llama.cpp's own bytes (tests/data/formats/imatrix_q.ref, written by
// imatrix_q_make_reference.py from ggml_quantize_chunk): with no importance, all-ones importance and
// a log-normal one with a run of zero columns, block for block; and without importance,
// quantize_rows writes what from_float_ref does.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "tests/core/quant/quant_test_util.h"

namespace ox {
namespace {

constexpr int64_t kPerRow = 1024;
constexpr int64_t kRows = 4;

class ImatrixQuantReference : public ::testing::TestWithParam<DType> {
 protected:
  static void SetUpTestSuite() { sections_ = new std::map<std::string, std::vector<uint8_t>>(test::read_ref_sections("imatrix_q.ref")); }
  static void TearDownTestSuite() {
    delete sections_;
    sections_ = nullptr;
  }
  static const std::vector<uint8_t>& section(const std::string& name) {
    const auto it = sections_->find(name);
    EXPECT_NE(it, sections_->end()) << "imatrix_q.ref has no section " << name;
    static const std::vector<uint8_t> kEmpty;
    return it == sections_->end() ? kEmpty : it->second;
  }
  static std::map<std::string, std::vector<uint8_t>>* sections_;
};
std::map<std::string, std::vector<uint8_t>>* ImatrixQuantReference::sections_ = nullptr;

TEST_P(ImatrixQuantReference, BytesMatchLlamaCpp) {
  const DType t = GetParam();
  ASSERT_NE(quant_traits(t).quantize_rows, nullptr) << dtype_name(t) << " has no importance-aware quantizer";
  const std::vector<float> x = test::ref_floats(section("x")), importance = test::ref_floats(section("importance"));
  ASSERT_EQ(x.size(), static_cast<size_t>(kRows * kPerRow));
  ASSERT_EQ(importance.size(), static_cast<size_t>(kPerRow));
  const std::vector<float> ones(kPerRow, 1.0f);
  const std::pair<const char*, const float*> variants[] = {{"none", nullptr}, {"ones", ones.data()}, {"imp", importance.data()}};
  const uint32_t ts = dtype_facts(t).type_size, bs = dtype_facts(t).block_size;
  for (const auto& [name, imp] : variants) {
    const std::vector<uint8_t>& want = section(std::string(dtype_name(t)) + "_" + name);
    ASSERT_EQ(want.size(), dtype_row_bytes(t, kPerRow) * kRows) << name;
    std::vector<uint8_t> got(want.size());
    quantize_rows(t, x.data(), got.data(), kRows, kPerRow, imp);
    for (size_t b = 0; b < want.size() / ts; ++b) {
      EXPECT_EQ(std::memcmp(&got[b * ts], &want[b * ts], ts), 0)
          << dtype_name(t) << " importance " << name << " block " << b << " (row " << b * bs / kPerRow << ")";
    }
  }
}

TEST_P(ImatrixQuantReference, WithoutImportanceIsFromFloatRef) {
  const DType t = GetParam();
  const std::vector<float> x = test::gaussian(static_cast<size_t>(kRows * kPerRow), 77);
  const uint64_t row_bytes = dtype_row_bytes(t, kPerRow);
  std::vector<uint8_t> rows(row_bytes * kRows), ref(row_bytes * kRows);
  quantize_rows(t, x.data(), rows.data(), kRows, kPerRow, nullptr);
  for (int64_t r = 0; r < kRows; ++r) quant_traits(t).from_float_ref(x.data() + r * kPerRow, ref.data() + r * row_bytes, kPerRow);
  EXPECT_EQ(rows, ref) << dtype_name(t);
}

INSTANTIATE_TEST_SUITE_P(Formats, ImatrixQuantReference,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K,
                                           DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ox
