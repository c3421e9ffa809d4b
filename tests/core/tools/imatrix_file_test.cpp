// The imatrix reader and writer against files llama-imatrix wrote (tests/data/imatrix, made by
// make_reference.sh): what they hold, byte-identical rewrites in both formats, llama-quantize's
// normalisation, and a refusal naming the file and entry for each kind of malformed input.
#include "core/tools/imatrix_file.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/gguf/writer.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

const std::string kDir = "tests/data/imatrix/";

std::vector<uint8_t> data_file(const std::string& name) { return test::read_file_bytes(test::source_path(kDir + name)); }

Imatrix parse_ok(const std::vector<uint8_t>& bytes, const std::string& name) {
  Result<Imatrix> m = parse_imatrix(bytes, name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : Imatrix{};
}

TEST(ImatrixFile, ReadsLlamaImatrixGguf) {
  const Imatrix m = parse_ok(data_file("stories260K.c128.f32.imatrix.gguf"), "ref.gguf");
  EXPECT_FALSE(m.legacy);
  EXPECT_EQ(m.datasets, std::vector<std::string>{"tests/data/perplexity/story.txt"});
  EXPECT_EQ(m.chunk_count, 23u);  // 2948 tokens in chunks of 128
  EXPECT_EQ(m.chunk_size, 128u);
  ASSERT_EQ(m.entries.size(), 35u);  // 5 layers x (q, k, v, output, gate, up, down)
  const ImatrixEntry& q = m.entries.at("blk.0.attn_q.weight");
  EXPECT_EQ(q.sums.size(), 64u);
  EXPECT_EQ(q.counts, std::vector<int64_t>{23 * 128});
  EXPECT_EQ(m.entries.at("blk.4.ffn_down.weight").sums.size(), 172u);
  EXPECT_EQ(m.entries.count("output.weight"), 0u);  // only with --process-output
}

TEST(ImatrixFile, ReadsExpertCountsOfAMoeModel) {
  const Imatrix m = parse_ok(data_file("mixtral-moe.c64.f32.imatrix.gguf"), "moe.gguf");
  const ImatrixEntry& up = m.entries.at("blk.0.ffn_up_exps.weight");
  ASSERT_EQ(up.counts.size(), 4u);  // one count per expert
  int64_t routed = 0;
  for (int64_t c : up.counts) routed += c;
  EXPECT_EQ(routed, 2 * 4 * 64);  // two experts per token, 4 chunks of 64
  EXPECT_EQ(up.sums.size() % up.counts.size(), 0u);
}

TEST(ImatrixFile, RewritesLlamaFilesByteForByte) {
  for (const char* name : {"stories260K.c128.f32.imatrix.gguf", "mixtral-moe.c64.f32.imatrix.gguf"}) {
    const std::vector<uint8_t> bytes = data_file(name);
    auto out = imatrix_to_bytes(parse_ok(bytes, name), ImatrixFormat::kGguf);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_TRUE(*out == bytes) << name;
  }
  const std::vector<uint8_t> dat = data_file("stories260K.c128.f32.imatrix.dat");
  const Imatrix legacy = parse_ok(dat, "ref.dat");
  EXPECT_TRUE(legacy.legacy);
  EXPECT_EQ(legacy.chunk_count, 23u);
  EXPECT_EQ(legacy.datasets, std::vector<std::string>{"tests/data/perplexity/story.txt"});
  auto out = imatrix_to_bytes(legacy, ImatrixFormat::kDat);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(*out == dat);
  // The .dat llama-imatrix wrote from the same run's statistics, made here from the GGUF's raw sums.
  const Imatrix raw = parse_ok(data_file("stories260K.c128.f32.imatrix.gguf"), "ref.gguf");
  out = imatrix_to_bytes(raw, ImatrixFormat::kDat);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(*out == dat);
  EXPECT_EQ(imatrix_to_bytes(legacy, ImatrixFormat::kGguf).status().code(), ErrorCode::kUnsupported);
}

TEST(ImatrixFile, ImportanceIsTheMeanSquareInBothFormats) {
  const Imatrix raw = parse_ok(data_file("stories260K.c128.f32.imatrix.gguf"), "ref.gguf");
  const Imatrix legacy = parse_ok(data_file("stories260K.c128.f32.imatrix.dat"), "ref.dat");
  ASSERT_EQ(raw.entries.size(), legacy.entries.size());
  for (const auto& [name, e] : raw.entries) {
    const std::vector<float> a = imatrix_importance(raw, e);
    const std::vector<float> b = imatrix_importance(legacy, legacy.entries.at(name));
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_FLOAT_EQ(a[i], e.sums[i] / 2944.0f) << name << " " << i;
      // .dat stores (sum / count) * n_call in f32; dividing by n_call again is within 2 ulp.
      EXPECT_NEAR(a[i], b[i], 2.5e-7 * a[i]) << name << " " << i;
    }
  }
}

TEST(ImatrixFile, ExpertsNoTokenReachedGetImportanceOne) {
  Imatrix m;
  m.chunk_size = 4;
  m.chunk_count = 2;
  m.datasets = {"a.txt", "b.txt"};
  m.entries["blk.0.ffn_up_exps.weight"] = ImatrixEntry{{2, 4, 0, 0, 9, 18}, {2, 0, 9}};
  auto bytes = imatrix_to_bytes(m, ImatrixFormat::kGguf);
  ASSERT_TRUE(bytes.ok());
  const Imatrix back = parse_ok(*bytes, "moe.gguf");
  EXPECT_EQ(back.datasets, m.datasets);
  const ImatrixEntry& e = back.entries.at("blk.0.ffn_up_exps.weight");
  EXPECT_EQ(e.counts, (std::vector<int64_t>{2, 0, 9}));
  EXPECT_EQ(imatrix_importance(back, e), (std::vector<float>{1, 2, 1, 1, 1, 2}));
  // .dat: n_call = ceil(9 / 4) = 3; the untouched expert stores 1 * n_call; the last dataset is kept.
  bytes = imatrix_to_bytes(m, ImatrixFormat::kDat);
  ASSERT_TRUE(bytes.ok());
  const Imatrix dat = parse_ok(*bytes, "moe.dat");
  EXPECT_EQ(dat.entries.at("blk.0.ffn_up_exps.weight").counts, std::vector<int64_t>{3});
  EXPECT_EQ(dat.entries.at("blk.0.ffn_up_exps.weight").sums, (std::vector<float>{3, 6, 3, 3, 3, 6}));
  EXPECT_EQ(dat.datasets, std::vector<std::string>{"b.txt"});
  EXPECT_EQ(dat.chunk_count, 2u);
}

// ---- malformed .dat files

struct DatBuilder {
  std::vector<uint8_t> bytes;
  DatBuilder& i32(int32_t v) { return raw(&v, 4); }
  DatBuilder& f32(float v) { return raw(&v, 4); }
  DatBuilder& str(const std::string& s) { return raw(s.data(), s.size()); }
  DatBuilder& raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
    return *this;
  }
  // One entry with n_val = values.size().
  DatBuilder& entry(const std::string& name, int32_t n_call, std::vector<float> values) {
    i32(static_cast<int32_t>(name.size())).str(name).i32(n_call).i32(static_cast<int32_t>(values.size()));
    for (float v : values) f32(v);
    return *this;
  }
};

void expect_refused(const std::vector<uint8_t>& bytes, const std::string& what, const std::string& needle) {
  const Result<Imatrix> m = parse_imatrix(bytes, "bad.imatrix");
  ASSERT_FALSE(m.ok()) << what;
  EXPECT_EQ(m.status().code(), ErrorCode::kInvalidFile) << what;
  EXPECT_NE(m.status().message().find("bad.imatrix"), std::string::npos) << what << ": " << m.status().message();
  EXPECT_NE(m.status().message().find(needle), std::string::npos) << what << ": " << m.status().message();
}

TEST(ImatrixFile, RefusesMalformedDat) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  expect_refused({}, "empty", "entry count needs 4 bytes");
  expect_refused(DatBuilder().i32(0).bytes, "no entries", "entry count 0");
  expect_refused(DatBuilder().i32(1000000).entry("a", 1, {1}).bytes, "count past the end", "entry count 1000000");
  expect_refused(DatBuilder().i32(1).i32(-5).str("abcdefghijklmnop").bytes, "negative name length", "name length -5");
  expect_refused(DatBuilder().i32(1).i32(900).str("abcdefghijklmnop").bytes, "name past the end", "name length 900");
  expect_refused(DatBuilder().i32(1).i32(1).str("a").i32(1).i32(1000).f32(1).bytes, "values past the end",
                 "value count 1000");
  expect_refused(DatBuilder().i32(1).i32(1).str("a").i32(1).i32(0).f32(1).bytes, "no values", "value count 0");
  expect_refused(DatBuilder().i32(1).i32(1).str("a").i32(-1).i32(1).f32(1).bytes, "negative calls", "call count -1");
  expect_refused(DatBuilder().i32(1).entry("blk.0.x", 1, {1, nan}).bytes, "NaN", "entry 'blk.0.x': sum value 1 is nan");
  expect_refused(DatBuilder().i32(1).entry("blk.0.x", 1, {inf}).bytes, "inf", "sum value 0 is inf");
  expect_refused(DatBuilder().i32(1).entry("blk.0.x", 1, {-1}).bytes, "negative", "sum value 0 is -1");
  expect_refused(DatBuilder().i32(2).entry("a", 1, {1}).entry("a", 1, {1}).bytes, "duplicate", "'a' appears twice");
  expect_refused(DatBuilder().i32(1).entry("a", 1, {1}).i32(3).bytes, "cut trailer", "dataset name length needs 4");
  expect_refused(DatBuilder().i32(1).entry("a", 1, {1}).i32(3).i32(10).str("x").bytes, "dataset past the end",
                 "dataset name length 10 does not match the 1 bytes left");
  expect_refused(DatBuilder().i32(1).entry("a", 1, {1}).i32(-3).i32(0).bytes, "negative chunks", "chunk count -3");
  std::string with_nul("a\0b", 3);
  expect_refused(DatBuilder().i32(1).entry(with_nul, 1, {1}).bytes, "NUL in name", "NUL");
  // Without the optional trailer (older llama.cpp): accepted.
  const Result<Imatrix> ok = parse_imatrix(DatBuilder().i32(1).entry("a", 2, {4, 6}).bytes, "old.dat");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(imatrix_importance(*ok, ok->entries.at("a")), (std::vector<float>{2, 3}));
}

// ---- malformed GGUF files

struct GgufCase {
  gguf::GgufWriter w;
  explicit GgufCase(bool metadata = true) {
    if (!metadata) return;
    const std::string datasets[] = {"t.txt"};
    EXPECT_TRUE(w.add_string_array(kImatrixDatasetsKey, datasets).is_ok());
    EXPECT_TRUE(w.add_u32(kImatrixChunkCountKey, 1).is_ok());
    EXPECT_TRUE(w.add_u32(kImatrixChunkSizeKey, 4).is_ok());
  }
  GgufCase& tensor(const std::string& name, std::vector<uint64_t> dims, std::vector<float> v) {
    EXPECT_TRUE(w.add_tensor(name, dims, DType::F32,
                             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4))
                    .is_ok());
    return *this;
  }
  std::vector<uint8_t> bytes() const { return *w.to_bytes(); }
};

TEST(ImatrixFile, RefusesMalformedGguf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string e = "blk.0.attn_q.weight";
  expect_refused(GgufCase().tensor(e + ".in_sum2", {2}, {1, 2}).bytes(), "no counts", "'" + e + "' has sums but no counts");
  expect_refused(GgufCase().tensor(e + ".counts", {1}, {4}).bytes(), "no sums", "has counts but no in_sum2");
  expect_refused(GgufCase().tensor(e + ".in_sum2", {2, 3}, {1, 2, 3, 4, 5, 6}).tensor(e + ".counts", {1, 2}, {4, 4}).bytes(),
                 "counts per matrix", "2 counts (dims[0] 1) for 3 matrices");
  expect_refused(GgufCase().tensor(e + ".in_sum2", {2}, {1, nan}).tensor(e + ".counts", {1}, {4}).bytes(), "NaN sum",
                 "entry '" + e + "': sum value 1 is nan");
  expect_refused(GgufCase().tensor(e + ".in_sum2", {2}, {1, 2}).tensor(e + ".counts", {1}, {2.5f}).bytes(),
                 "fractional count", "count 0 is 2.5");
  expect_refused(GgufCase().tensor(e + ".in_sum2", {2}, {1, 2}).tensor(e + ".counts", {1}, {-1}).bytes(),
                 "negative count", "count 0 is -1");
  expect_refused(GgufCase().tensor("blk.0.other", {2}, {1, 2}).bytes(), "stray tensor", "'blk.0.other' is neither");
  expect_refused(GgufCase().bytes(), "no entries", "no imatrix entries");
  expect_refused(GgufCase(false).tensor(e + ".in_sum2", {2}, {1, 2}).tensor(e + ".counts", {1}, {4}).bytes(),
                 "no metadata", "key imatrix.datasets is missing");
  GgufCase model;
  EXPECT_TRUE(model.w.add_string("general.type", "model").is_ok());
  expect_refused(model.tensor("token_embd.weight", {2}, {1, 2}).bytes(), "a model", "general.type is 'model'");
  GgufCase f16;
  const uint16_t halves[2] = {0x3c00, 0x3c00};
  ASSERT_TRUE(f16.w.add_tensor(e + ".in_sum2", std::vector<uint64_t>{2}, DType::F16,
                               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(halves), 4))
                  .is_ok());
  expect_refused(f16.tensor(e + ".counts", {1}, {4}).bytes(), "F16 sums", "is F16; imatrix tensors must be F32");
  std::vector<uint8_t> cut = GgufCase().tensor(e + ".in_sum2", {2}, {1, 2}).tensor(e + ".counts", {1}, {4}).bytes();
  cut.resize(cut.size() - 40);  // into the tensor data
  expect_refused(cut, "truncated", "");
}

TEST(ImatrixFile, ReadImatrixNamesAMissingFile) {
  const Result<Imatrix> m = read_imatrix(testing::TempDir() + "no_such.imatrix");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no_such.imatrix"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace ox
