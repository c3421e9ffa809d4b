// Our MXFP4 / TQ1_0 / TQ2_0 references against llama.cpp's own output, bit for bit: the bytes
// ggml_quantize_chunk made from fixed inputs and the floats dequantize_row_* made from those bytes
// and from random blocks, stored in tests/data/formats/golden.bin by make_golden.py beside it.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "tests/core/quant/quant_test_util.h"
#include "tests/support/float_bits.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

struct GoldenRecord {
  DType type;
  std::vector<float> input;  // empty for the dequantize-only records
  std::vector<uint8_t> bytes;
  std::vector<float> dequantized;
};

// Reads the layout make_golden.py documents; a gtest failure (and an empty list) if it is off.
class GoldenReader {
 public:
  explicit GoldenReader(const std::vector<uint8_t>& b) : b_(b) {}
  bool ok() const { return ok_; }
  uint32_t u32() {
    uint32_t v = 0;
    take(&v, 4);
    return v;
  }
  std::vector<float> floats(size_t n) {
    std::vector<float> v(n);
    take(v.data(), 4 * n);
    return v;
  }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    take(v.data(), n);
    return v;
  }

 private:
  void take(void* out, size_t n) {
    if (!ok_ || n > b_.size() - pos_) {
      ok_ = false;
      return;
    }
    std::memcpy(out, b_.data() + pos_, n);
    pos_ += n;
  }
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::vector<GoldenRecord> read_golden() {
  const std::vector<uint8_t> file = test::read_file_bytes(test::source_path("tests/data/formats/golden.bin"));
  GoldenReader r(file);
  std::vector<GoldenRecord> records;
  if (r.bytes(4) != std::vector<uint8_t>{'O', 'X', 'Q', 'G'} || r.u32() != 1) {
    ADD_FAILURE() << "golden.bin: not version 1 of the layout make_golden.py writes";
    return {};
  }
  const uint32_t count = r.u32();
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    GoldenRecord rec;
    rec.type = static_cast<DType>(r.u32());
    const uint32_t n = r.u32();
    if (n > (1u << 20)) break;
    if ((r.u32() & 1u) != 0) rec.input = r.floats(n);
    rec.bytes = r.bytes(r.u32() & 0xFFFFFu);
    rec.dequantized = r.floats(n);
    records.push_back(std::move(rec));
  }
  EXPECT_TRUE(r.ok()) << "golden.bin is truncated";
  return records;
}

const std::vector<GoldenRecord>& golden() {
  static const std::vector<GoldenRecord> records = read_golden();
  return records;
}

using test::float_bits;

TEST(LlamaCppGolden, CoversEachFormatBothWays) {
  for (DType t : {DType::MXFP4, DType::TQ1_0, DType::TQ2_0}) {
    int quantized = 0, decoded = 0;
    for (const GoldenRecord& r : golden()) {
      if (r.type != t) continue;
      ++(r.input.empty() ? decoded : quantized);
      ASSERT_EQ(r.bytes.size(), dtype_row_bytes(t, r.dequantized.size())) << dtype_name(t);
    }
    EXPECT_GE(quantized, 1) << dtype_name(t);
    EXPECT_GE(decoded, 1) << dtype_name(t);
  }
}

TEST(LlamaCppGolden, DequantizeIsBitExact) {
  for (const GoldenRecord& r : golden()) {
    const std::vector<float> y = test::dequantize(r.type, r.bytes, r.dequantized.size());
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(float_bits(y[i]), float_bits(r.dequantized[i]))
          << dtype_name(r.type) << (r.input.empty() ? " random blocks" : " quantized input") << " element " << i
          << ": ours " << y[i] << ", llama.cpp " << r.dequantized[i];
    }
  }
}

// All three quantizers are deterministic (no search, no importance weights): the same bytes.
TEST(LlamaCppGolden, QuantizeGivesLlamaCppsBytes) {
  for (const GoldenRecord& r : golden()) {
    if (r.input.empty()) continue;
    const std::vector<uint8_t> q = test::quantize(r.type, r.input);
    ASSERT_EQ(q.size(), r.bytes.size());
    const size_t ts = dtype_facts(r.type).type_size;
    for (size_t i = 0; i < q.size(); ++i) {
      ASSERT_EQ(q[i], r.bytes[i]) << dtype_name(r.type) << " block " << i / ts << " byte " << i % ts;
    }
  }
}

}  // namespace
}  // namespace ox
