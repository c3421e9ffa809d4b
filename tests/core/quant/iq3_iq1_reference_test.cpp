// IQ3_XXS, IQ3_S, IQ1_S and IQ1_M against llama.cpp's own results (tests/data/formats/*.ref,
// written by tests/data/formats/iq3_iq1_make_reference.py from llama.cpp v0.5.0's libraries):
// dequantization bit for bit on blocks covering every codebook entry, dot products equal to
// llama.cpp's generic C code (bit for bit where its build does not fuse; see expect_dots) and to
// its SIMD code within float reordering, and the quantizers' bytes equal to ggml_quantize_chunk's
// without an importance vector, with all ones and with a log-normal one.
#include <cfloat>
#include <cmath>
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

constexpr int64_t kIqPerRow = 1024;
constexpr int64_t kIqRows = 3;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct IqCase {
  DType type;
  const char* file;
};

class Iq3Iq1Reference : public ::testing::TestWithParam<IqCase> {
 protected:
  void SetUp() override {
    s_ = test::read_ref_sections(GetParam().file);
    ASSERT_FALSE(s_.empty()) << GetParam().file;
  }
  const std::vector<uint8_t>& section(const std::string& name) {
    const auto it = s_.find(name);
    EXPECT_NE(it, s_.end()) << GetParam().file << " has no section " << name;
    static const std::vector<uint8_t> kEmpty;
    return it == s_.end() ? kEmpty : it->second;
  }
  std::map<std::string, std::vector<uint8_t>> s_;
};

TEST_P(Iq3Iq1Reference, DequantizeIsBitExact) {
  const DType t = GetParam().type;
  const std::vector<uint8_t>& blocks = section("sweep");
  const std::vector<float> want = test::ref_floats(section("deq_sweep"));
  const uint64_t n = blocks.size() / dtype_facts(t).type_size * dtype_facts(t).block_size;
  ASSERT_EQ(want.size(), n);
  std::vector<float> got(n);
  quant_traits(t).to_float(blocks.data(), got.data(), static_cast<int64_t>(n));
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(bits(got[i]), bits(want[i])) << dtype_name(t) << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

// Dot products against llama.cpp's generic C and its SIMD code. llama.cpp's generic code, as built
// (gcc -O3 -march=native, which contracts a * b + c into fused multiply-adds in C), computes the
// same integer sums and per-block scale products, but for IQ1_S / IQ1_M adds each block's
// product to the sum fused (one rounding fewer; the IQ3 ones are not contracted). So: every block
// alone (nothing to fuse with) bit for bit; whole rows bit for bit for IQ3, and for IQ1 within
// the error bound of an nb-term float sum computed two ways, 2 (nb + 1) FLT_EPSILON * sum |terms|,
// with sum |terms| <= sum |dx * dy| of the dequantized rows. The SIMD code also splits and
// reorders the sums: within 1e-5 of sum |dx * dy|, as vec_dot_test.cpp allows.
double abs_dot(DType t, const uint8_t* w, const uint8_t* act, int64_t n) {
  std::vector<float> dx(static_cast<size_t>(n)), dy(static_cast<size_t>(n));
  quant_traits(t).to_float(w, dx.data(), n);
  quant_traits(DType::Q8_K).to_float(act, dy.data(), n);
  double abs_sum = 0.0;
  for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(static_cast<double>(dx[i]) * dy[i]);
  return abs_sum;
}

void expect_dots(DType t, const std::vector<uint8_t>& w, const std::vector<uint8_t>& act, int64_t n, int64_t rows,
                 const std::map<std::string, std::vector<float>>& want, const char* what) {
  const uint64_t wb = dtype_row_bytes(t, static_cast<uint64_t>(n)), ab = dtype_row_bytes(DType::Q8_K, static_cast<uint64_t>(n));
  const uint32_t ts = dtype_facts(t).type_size;
  const int64_t nb = n / 256;
  ASSERT_EQ(w.size(), wb * rows);
  ASSERT_EQ(act.size(), ab * rows);
  ASSERT_EQ(want.at("generic").size(), static_cast<size_t>(rows));
  ASSERT_EQ(want.at("simd").size(), static_cast<size_t>(rows));
  ASSERT_EQ(want.at("block_generic").size(), static_cast<size_t>(rows * nb));
  for (int64_t b = 0; b < rows * nb; ++b) {
    float got = NAN;
    quant_traits(t).vec_dot_ref(256, &got, w.data() + b * ts, act.data() + b * 292);
    ASSERT_EQ(bits(got), bits(want.at("block_generic")[b])) << dtype_name(t) << " " << what << " block " << b << ": "
                                                           << got << " vs " << want.at("block_generic")[b];
  }
  const bool fused = t == DType::IQ1_S || t == DType::IQ1_M;
  for (int64_t r = 0; r < rows; ++r) {
    float got = NAN;
    quant_traits(t).vec_dot_ref(n, &got, w.data() + r * wb, act.data() + r * ab);
    const double abs_sum = abs_dot(t, w.data() + r * wb, act.data() + r * ab, n);
    const float generic = want.at("generic")[r];
    if (fused) {
      EXPECT_NEAR(got, generic, 2.0 * static_cast<double>(nb + 1) * FLT_EPSILON * abs_sum) << dtype_name(t) << " " << what << " row " << r;
    } else {
      EXPECT_EQ(bits(got), bits(generic)) << dtype_name(t) << " " << what << " row " << r << ": " << got << " vs " << generic;
    }
    EXPECT_NEAR(got, want.at("simd")[r], 1e-5 * abs_sum) << dtype_name(t) << " " << what << " row " << r;
  }
}

TEST_P(Iq3Iq1Reference, VecDotMatchesLlamaCpp) {
  const DType t = GetParam().type;
  auto dots = [&](const std::string& prefix) {
    std::map<std::string, std::vector<float>> m;
    for (const char* kind : {"generic", "simd", "block_generic"}) m[kind] = test::ref_floats(section(prefix + kind));
    return m;
  };
  expect_dots(t, section("q_imp"), section("act"), kIqPerRow, kIqRows, dots("dot_imp_"), "quantized rows");
  const std::vector<uint8_t>& sweep = section("sweep");
  const int64_t n = static_cast<int64_t>(sweep.size() / dtype_facts(t).type_size * 256);
  expect_dots(t, sweep, section("act_sweep"), n, 1, dots("dot_sweep_"), "sweep");
}

TEST_P(Iq3Iq1Reference, QuantizerBytesMatchLlamaCpp) {
  const DType t = GetParam().type;
  const std::vector<float> x = test::ref_floats(section("x")), importance = test::ref_floats(section("importance"));
  ASSERT_EQ(x.size(), static_cast<size_t>(kIqRows * kIqPerRow));
  ASSERT_EQ(importance.size(), static_cast<size_t>(kIqPerRow));
  const std::vector<float> ones(kIqPerRow, 1.0f);
  std::vector<std::pair<std::string, const float*>> variants = {{"q_ones", ones.data()}, {"q_imp", importance.data()}};
  if (!quant_traits(t).needs_importance || t == DType::IQ1_M) variants.push_back({"q_none", nullptr});
  const uint64_t row_bytes = dtype_row_bytes(t, kIqPerRow);
  const uint32_t ts = dtype_facts(t).type_size;
  for (const auto& [name, imp] : variants) {
    const std::vector<uint8_t>& want = section(name);
    ASSERT_EQ(want.size(), row_bytes * kIqRows) << name;
    std::vector<uint8_t> got(want.size());
    quantize_rows(t, x.data(), got.data(), kIqRows, kIqPerRow, imp);
    for (size_t b = 0; b < want.size() / ts; ++b) {
      EXPECT_EQ(std::memcmp(&got[b * ts], &want[b * ts], ts), 0) << dtype_name(t) << " " << name << " block " << b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Iq3Iq1Reference,
                         ::testing::Values(IqCase{DType::IQ3_XXS, "iq3_xxs.ref"}, IqCase{DType::IQ3_S, "iq3_s.ref"},
                                           IqCase{DType::IQ1_S, "iq1_s.ref"}, IqCase{DType::IQ1_M, "iq1_m.ref"}),
                         [](const ::testing::TestParamInfo<IqCase>& info) { return std::string(dtype_name(info.param.type)); });

}  // namespace
}  // namespace ox
