// IQ2_XXS / IQ2_XS / IQ2_S against llama.cpp itself: blocks it quantized, its dequantized floats and
// its dot products with Q8_K activations (tests/data/formats/iq2_*.bin, written by
// make_iq2_reference.py there from libggml-base.so / libggml-cpu.so). Dequantization and per-block
// dot products must match bit for bit, and the quantizer must give the same bytes.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

// Reads the arrays of one file in order; a short file fails the test rather than reading past it.
class Reader {
 public:
  explicit Reader(const std::string& name)
      : bytes_(test::read_file_bytes(test::source_path("tests/data/formats/" + name))) {}
  bool ok() const { return ok_; }
  std::string magic() {
    const std::vector<uint8_t> b = take(8);
    return std::string(b.begin(), b.end());
  }
  uint32_t u32() {
    uint32_t v = 0;
    const std::vector<uint8_t> b = take(4);
    if (ok_) std::memcpy(&v, b.data(), 4);
    return v;
  }
  std::vector<uint8_t> take(size_t n) {
    if (pos_ + n > bytes_.size()) {
      ok_ = false;
      return std::vector<uint8_t>(n);
    }
    std::vector<uint8_t> v(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_),
                           bytes_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return v;
  }
  std::vector<float> floats(size_t n) {
    std::vector<float> v(n);
    const std::vector<uint8_t> b = take(4 * n);
    std::memcpy(v.data(), b.data(), 4 * n);
    return v;
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

struct Reference {
  DType type;
  int64_t n_rows, n_per_row;
  std::vector<float> x, importance;  // importance empty: llama.cpp got none
  std::vector<uint8_t> q, a;         // quantized weights; Q8_K activations
  std::vector<float> y, dot_block, dot_row_generic, dot_row_cpu;
};

Reference load(const std::string& name) {
  Reader r(name);
  Reference ref{};
  EXPECT_EQ(r.magic(), std::string("OXQREF1\0", 8)) << name;
  ref.type = static_cast<DType>(r.u32());
  ref.n_rows = r.u32();
  ref.n_per_row = r.u32();
  const bool has_importance = r.u32() != 0;
  const size_t n = static_cast<size_t>(ref.n_rows * ref.n_per_row), n_blocks = n / 256;
  ref.x = r.floats(n);
  if (has_importance) ref.importance = r.floats(static_cast<size_t>(ref.n_per_row));
  ref.q = r.take(dtype_row_bytes(ref.type, n));
  ref.y = r.floats(n);
  ref.a = r.take(dtype_row_bytes(DType::Q8_K, n));
  ref.dot_block = r.floats(n_blocks);
  ref.dot_row_generic = r.floats(static_cast<size_t>(ref.n_rows));
  ref.dot_row_cpu = r.floats(static_cast<size_t>(ref.n_rows));
  EXPECT_TRUE(r.ok() && r.at_end()) << name << ": not the layout make_iq2_reference.py writes";
  return ref;
}

struct Case {
  const char* file;
  DType type;
};
constexpr Case kCases[] = {{"iq2_xxs.bin", DType::IQ2_XXS},
                           {"iq2_xs.bin", DType::IQ2_XS},
                           {"iq2_s.bin", DType::IQ2_S},
                           {"iq2_s_no_importance.bin", DType::IQ2_S}};

void expect_bit_equal(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    ASSERT_EQ(a, b) << what << " element " << i << ": " << got[i] << " vs llama.cpp " << want[i];
  }
}

TEST(Iq2Reference, DequantizeIsBitExact) {
  for (const Case& c : kCases) {
    const Reference ref = load(c.file);
    ASSERT_EQ(ref.type, c.type) << c.file;
    std::vector<float> y(ref.y.size());
    quant_traits(c.type).to_float(ref.q.data(), y.data(), static_cast<int64_t>(y.size()));
    expect_bit_equal(y, ref.y, c.file);
  }
}

// Blocks that run through every codebook entry, sign pattern and scale nibble, with fp16 d from
// subnormal to 250.
TEST(Iq2Reference, EveryCodebookEntryDequantizesBitExact) {
  const std::pair<const char*, DType> files[] = {{"iq2_xxs_codebook.bin", DType::IQ2_XXS},
                                                 {"iq2_xs_codebook.bin", DType::IQ2_XS},
                                                 {"iq2_s_codebook.bin", DType::IQ2_S}};
  for (const auto& [file, type] : files) {
    Reader r(file);
    EXPECT_EQ(r.magic(), std::string("OXQCB1\0\0", 8)) << file;
    EXPECT_EQ(r.u32(), static_cast<uint32_t>(type)) << file;
    const size_t n = static_cast<size_t>(r.u32()) * 256;
    const std::vector<uint8_t> q = r.take(dtype_row_bytes(type, n));
    const std::vector<float> want = r.floats(n);
    ASSERT_TRUE(r.ok() && r.at_end()) << file;
    std::vector<float> y(n);
    quant_traits(type).to_float(q.data(), y.data(), static_cast<int64_t>(n));
    expect_bit_equal(y, want, file);
  }
}

// The quantizer follows llama.cpp's algorithm operation for operation (it is deterministic: no
// threads, no randomness), so it must produce the same bytes.
TEST(Iq2Reference, QuantizerGivesLlamaCppBytes) {
  for (const Case& c : kCases) {
    const Reference ref = load(c.file);
    std::vector<uint8_t> q(ref.q.size());
    quantize_rows(c.type, ref.x.data(), q.data(), ref.n_rows, ref.n_per_row,
                  ref.importance.empty() ? nullptr : ref.importance.data());
    const size_t ts = dtype_facts(c.type).type_size;
    for (size_t b = 0; b < q.size() / ts; ++b) {
      EXPECT_EQ(std::memcmp(q.data() + b * ts, ref.q.data() + b * ts, ts), 0) << c.file << " block " << b;
    }
  }
  // IQ2_S's importance-free reference quantizer is the same search with no importance.
  const Reference ref = load("iq2_s_no_importance.bin");
  std::vector<uint8_t> q(ref.q.size());
  quant_traits(DType::IQ2_S).from_float_ref(ref.x.data(), q.data(), static_cast<int64_t>(ref.x.size()));
  EXPECT_EQ(q, ref.q);
}

// One block: the integer sum and the single float term leave no freedom, so bit-exact with
// llama.cpp's generic kernel. Whole rows: llama.cpp's kernels sum the block terms in another order
// (its generic one, built with -march=native, may fuse them; the SIMD one sums per lane), so
// within a few roundings of the sum of |products|.
TEST(Iq2Reference, VecDotMatchesLlamaCpp) {
  for (const Case& c : kCases) {
    const Reference ref = load(c.file);
    const QuantTraits& t = quant_traits(c.type);
    ASSERT_EQ(t.vec_dot_type, DType::Q8_K);
    const size_t wb = dtype_facts(c.type).type_size, ab = dtype_facts(DType::Q8_K).type_size;
    for (size_t b = 0; b < ref.dot_block.size(); ++b) {
      float s = NAN;
      t.vec_dot_ref(256, &s, ref.q.data() + b * wb, ref.a.data() + b * ab);
      uint32_t got, want;
      std::memcpy(&got, &s, 4);
      std::memcpy(&want, &ref.dot_block[b], 4);
      EXPECT_EQ(got, want) << c.file << " block " << b << ": " << s << " vs " << ref.dot_block[b];
    }
    std::vector<float> act(ref.y.size());
    quant_traits(DType::Q8_K).to_float(ref.a.data(), act.data(), static_cast<int64_t>(act.size()));
    const int64_t blocks_per_row = ref.n_per_row / 256;
    for (int64_t r = 0; r < ref.n_rows; ++r) {
      double abs_sum = 0;
      for (int64_t i = r * ref.n_per_row; i < (r + 1) * ref.n_per_row; ++i) {
        abs_sum += std::fabs(static_cast<double>(ref.y[static_cast<size_t>(i)]) * act[static_cast<size_t>(i)]);
      }
      float s = NAN;
      t.vec_dot_ref(ref.n_per_row, &s, ref.q.data() + static_cast<size_t>(r * blocks_per_row) * wb,
                    ref.a.data() + static_cast<size_t>(r * blocks_per_row) * ab);
      const double tol = 16 * 0x1p-24 * abs_sum;  // a handful of float roundings of terms up to abs_sum
      EXPECT_NEAR(s, ref.dot_row_generic[static_cast<size_t>(r)], tol) << c.file << " row " << r;
      EXPECT_NEAR(s, ref.dot_row_cpu[static_cast<size_t>(r)], tol) << c.file << " row " << r;
    }
  }
}

}  // namespace
}  // namespace ox
