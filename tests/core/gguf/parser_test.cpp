// Hostile GGUF inputs: every malformed file must return an error naming the file, the byte
// offset and the field, key or tensor, and must never crash or read out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>

#include "core/gguf/gguf.h"
#include "tests/core/gguf/gguf_bytes.h"
#include "tests/support/shared_data.h"

namespace ox::gguf {
namespace {

using test::GgufBytes;
constexpr uint64_t k2Pow63 = uint64_t{1} << 63;

// Parses from an exact-size heap copy so that AddressSanitizer sees any read past the end.
Result<std::unique_ptr<GgufFile>> parse_copy(std::span<const uint8_t> bytes, const std::string& name) {
  std::shared_ptr<uint8_t[]> copy(new uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  return GgufFile::parse(std::span<const uint8_t>(copy.get(), bytes.size()), name, copy);
}

// The parse fails with `code` and the message holds every needle.
testing::AssertionResult fails_with(std::span<const uint8_t> bytes, ErrorCode code,
                                    std::initializer_list<std::string> needles) {
  auto r = parse_copy(bytes, "hostile.gguf");
  if (r.ok()) return testing::AssertionFailure() << "parsed without error";
  const std::string& msg = r.status().message();
  if (r.status().code() != code) {
    return testing::AssertionFailure() << "code " << error_code_name(r.status().code()) << " (want "
                                       << error_code_name(code) << "): " << msg;
  }
  if (msg.rfind("hostile.gguf: offset ", 0) != 0) {
    return testing::AssertionFailure() << "message does not start with the file and offset: " << msg;
  }
  for (const std::string& n : needles) {
    if (msg.find(n) == std::string::npos) return testing::AssertionFailure() << "no '" << n << "' in: " << msg;
  }
  return testing::AssertionSuccess() << msg;
}

testing::AssertionResult parses(std::span<const uint8_t> bytes) {
  auto r = parse_copy(bytes, "ok.gguf");
  if (!r.ok()) return testing::AssertionFailure() << r.status().message();
  return testing::AssertionSuccess();
}

// Byte position just after the key string `key` (u64 length + bytes) in `bytes`: where the value
// type field starts. Found by scanning the raw bytes, independently of the parser.
size_t after_key(const std::vector<uint8_t>& bytes, std::string_view key) {
  for (size_t at = 8; at + key.size() <= bytes.size(); ++at) {
    if (std::memcmp(bytes.data() + at, key.data(), key.size()) != 0) continue;
    uint64_t len;
    std::memcpy(&len, bytes.data() + at - 8, 8);
    if (len == key.size()) return at + key.size();
  }
  ADD_FAILURE() << "key not found: " << key;
  return 0;
}

std::vector<uint8_t> stories() { return ox::test::read_file_bytes(ox::test::shared_path("models/stories260K.gguf")); }

// ---- header ----

TEST(GgufHostile, EmptyAndTinyFiles) {
  EXPECT_TRUE(fails_with({}, ErrorCode::kInvalidFile, {"offset 0", "empty"}));
  const uint8_t three[] = {'G', 'G', 'U'};
  EXPECT_TRUE(fails_with(three, ErrorCode::kInvalidFile, {"offset 0", "magic"}));
}

TEST(GgufHostile, NotGguf) {
  const std::string text = "This is a text file, not a model.\n";
  EXPECT_TRUE(fails_with(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
                         ErrorCode::kInvalidFile, {"offset 0", "not a GGUF file", "54 68 69 73"}));
  GgufBytes ggml;  // the pre-GGUF "ggml" magic
  ggml.u32(0x67676d6c).u32(1).zeros(64);
  EXPECT_TRUE(fails_with(ggml.b, ErrorCode::kInvalidFile, {"not a GGUF file"}));
}

TEST(GgufHostile, Versions) {
  GgufBytes v1;
  v1.header(0, 0, 1);
  EXPECT_TRUE(fails_with(v1.b, ErrorCode::kUnsupported, {"offset 4", "unsupported GGUF version 1"}));
  GgufBytes v4;
  v4.header(0, 0, 4);
  EXPECT_TRUE(fails_with(v4.b, ErrorCode::kUnsupported, {"offset 4", "unsupported GGUF version 4"}));
  GgufBytes big;  // version 3 written big-endian
  big.header(0, 0, 0x03000000u);
  EXPECT_TRUE(fails_with(big.b, ErrorCode::kUnsupported, {"offset 4", "big-endian"}));
  GgufBytes v2;
  v2.header(0, 0, 2);
  EXPECT_TRUE(parses(v2.b));
  GgufBytes header_only;
  header_only.header(0, 0, 3);
  EXPECT_TRUE(parses(header_only.b));
}

TEST(GgufHostile, HugeCounts) {
  GgufBytes kv;
  kv.header(0, k2Pow63).zeros(100);
  EXPECT_TRUE(fails_with(kv.b, ErrorCode::kInvalidFile,
                         {"offset 16", "metadata count 9223372036854775808", "100 bytes left"}));
  GgufBytes tensors;
  tensors.header(~uint64_t{0}, 0).zeros(100);
  EXPECT_TRUE(fails_with(tensors.b, ErrorCode::kInvalidFile, {"offset 8", "tensor count 18446744073709551615"}));
  // A count that passes the first coarse check but not the one after the metadata.
  GgufBytes late;
  late.header(2, 1).kv_string("general.name", std::string(60, 'x'));
  EXPECT_TRUE(fails_with(late.b, ErrorCode::kInvalidFile, {"offset 8", "tensor count 2"}));
}

// ---- metadata ----

TEST(GgufHostile, Stories260KCorruptedCounts) {
  const std::vector<uint8_t> good = stories();
  ASSERT_FALSE(good.empty());
  ASSERT_TRUE(parses(good));
  const size_t type_at = after_key(good, "tokenizer.ggml.tokens");  // u32 ARRAY, u32 STRING, u64 count
  const size_t count_at = type_at + 8;

  std::vector<uint8_t> bad = good;
  uint64_t huge = k2Pow63;
  std::memcpy(bad.data() + count_at, &huge, 8);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile,
                         {"offset " + std::to_string(count_at), "metadata key 'tokenizer.ggml.tokens'",
                          "array count 9223372036854775808 exceeds the"}));

  bad = good;  // first token's length runs past the end of the file
  const uint64_t past = good.size();
  std::memcpy(bad.data() + count_at + 8, &past, 8);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile,
                         {"offset " + std::to_string(count_at + 8), "tokenizer.ggml.tokens", "element 0",
                          "string length 1185376 exceeds"}));

  bad = good;  // huge count of FLOAT32 scores
  const size_t scores_count_at = after_key(good, "tokenizer.ggml.scores") + 8;
  const uint64_t many = uint64_t{1} << 62;
  std::memcpy(bad.data() + scores_count_at, &many, 8);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile,
                         {"offset " + std::to_string(scores_count_at), "tokenizer.ggml.scores",
                          "array count 4611686018427387904 (FLOAT32"}));

  bad = good;  // huge metadata count / tensor count in a real file
  std::memcpy(bad.data() + 16, &huge, 8);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile, {"offset 16", "metadata count"}));
  bad = good;
  std::memcpy(bad.data() + 8, &huge, 8);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile, {"offset 8", "tensor count"}));

  bad = good;  // unknown value type for general.architecture
  const size_t arch_type_at = after_key(good, "general.architecture");
  const uint32_t thirteen = 13;
  std::memcpy(bad.data() + arch_type_at, &thirteen, 4);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidFile,
                         {"offset " + std::to_string(arch_type_at), "metadata key 'general.architecture'",
                          "unknown value type 13"}));
}

TEST(GgufHostile, TwoToThe63Strings) {
  GgufBytes g;
  g.header(0, 1).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(k2Pow63).str("a").str("b");
  EXPECT_TRUE(fails_with(g.b, ErrorCode::kInvalidFile,
                         {"offset 61", "metadata key 'tokenizer.ggml.tokens'", "array count 9223372036854775808",
                          "exceeds the 18 bytes left"}));
}

TEST(GgufHostile, UnknownTypesAndBadValues) {
  GgufBytes unknown;
  unknown.header(0, 1).str("a.key").u32(13).u32(0);
  EXPECT_TRUE(fails_with(unknown.b, ErrorCode::kInvalidFile, {"offset 37", "'a.key'", "unknown value type 13"}));
  GgufBytes elem;
  elem.header(0, 1).str("a.key").u32(9).u32(77).u64(0);
  EXPECT_TRUE(fails_with(elem.b, ErrorCode::kInvalidFile, {"offset 41", "'a.key'", "unknown array element type 77"}));
  GgufBytes boolean;
  boolean.header(0, 1).str("a.flag").u32(7).u8(2);
  EXPECT_TRUE(fails_with(boolean.b, ErrorCode::kInvalidFile, {"offset 42", "'a.flag'", "BOOL value 2"}));
  GgufBytes bool_array;
  bool_array.header(0, 1).str("a.flags").u32(9).u32(7).u64(3).u8(1).u8(0).u8(5);
  EXPECT_TRUE(fails_with(bool_array.b, ErrorCode::kInvalidFile, {"offset 57", "'a.flags'", "BOOL element 2 is 5"}));
  GgufBytes short_scalar;
  short_scalar.header(0, 1).str("a.u64").u32(10).u32(7);
  EXPECT_TRUE(fails_with(short_scalar.b, ErrorCode::kInvalidFile, {"offset 41", "'a.u64'", "UINT64 value needs 8"}));
  GgufBytes key_past_eof;
  key_past_eof.header(0, 1).u64(1000).zeros(20);
  EXPECT_TRUE(fails_with(key_past_eof.b, ErrorCode::kInvalidFile,
                         {"offset 24", "metadata entry 0 of 1", "key: string length 1000 exceeds the 20 bytes left"}));
  GgufBytes value_past_eof;
  value_past_eof.header(0, 1).str("k").u32(8).u64(uint64_t{1} << 40);
  EXPECT_TRUE(fails_with(value_past_eof.b, ErrorCode::kInvalidFile, {"offset 37", "'k'", "string length 1099511627776"}));
}

TEST(GgufHostile, DuplicateKeys) {
  GgufBytes g;
  g.header(0, 2).kv_u32("llama.block_count", 5).kv_u32("llama.block_count", 6);
  EXPECT_TRUE(fails_with(g.b, ErrorCode::kInvalidFile, {"offset 57", "'llama.block_count'", "duplicate metadata key"}));
}

// An array nested `depth` levels deep: [[[...[1]...]]].
GgufBytes nested(int depth) {
  GgufBytes g;
  g.header(0, 1).str("n").u32(9);
  for (int d = 1; d < depth; ++d) g.u32(9).u64(1);
  g.u32(5).u64(1).i32(1);
  return g;
}

TEST(GgufHostile, NestingDepth) {
  EXPECT_TRUE(parses(nested(8).b));
  EXPECT_TRUE(fails_with(nested(9).b, ErrorCode::kInvalidFile, {"'n'", "nested more than 8 deep"}));
  EXPECT_TRUE(fails_with(nested(10000).b, ErrorCode::kInvalidFile, {"'n'", "nested more than 8 deep"}));
  GgufBytes huge;  // 2^62 nested arrays
  huge.header(0, 1).str("n").u32(9).u32(9).u64(uint64_t{1} << 62).u32(5).u64(0);
  EXPECT_TRUE(fails_with(huge.b, ErrorCode::kInvalidFile, {"offset 41", "'n'", "array count 4611686018427387904"}));
}

TEST(GgufHostile, Alignment) {
  for (uint32_t a : {0u, 3u, 48u}) {
    GgufBytes g;
    g.header(0, 1).kv_u32("general.alignment", a);
    EXPECT_TRUE(fails_with(g.b, ErrorCode::kInvalidFile,
                           {"offset 53", "'general.alignment'", "alignment " + std::to_string(a) + " is not"}));
  }
  GgufBytes negative;
  negative.header(0, 1).str("general.alignment").u32(5).i32(-32);
  EXPECT_TRUE(fails_with(negative.b, ErrorCode::kInvalidFile, {"'general.alignment'", "alignment -32"}));
  GgufBytes text;
  text.header(0, 1).kv_string("general.alignment", "32");
  EXPECT_TRUE(fails_with(text.b, ErrorCode::kInvalidFile, {"'general.alignment'", "is STRING"}));
  GgufBytes huge;
  huge.header(0, 1).str("general.alignment").u32(10).u64(k2Pow63);
  EXPECT_TRUE(fails_with(huge.b, ErrorCode::kInvalidFile, {"'general.alignment'", "larger than 1 GiB"}));

  GgufBytes ok;  // alignment 64 is honoured: the data section starts at the next multiple of 64
  ok.header(1, 1).kv_u32("general.alignment", 64).tensor_info("w", {4}, 0, 0).pad_to(64).zeros(16);
  auto r = parse_copy(ok.b, "ok.gguf");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->alignment(), 64u);
  EXPECT_EQ((*r)->data_offset(), 128u);
}

// ---- tensor infos ----

// A file with one UINT32 KV (so offsets are predictable) and the given tensor infos written by
// `infos`, padded to 32, then `data_bytes` zero bytes of data.
template <typename F>
std::vector<uint8_t> with_tensors(uint64_t n_tensors, F infos, size_t data_bytes) {
  GgufBytes g;
  g.header(n_tensors, 0);
  infos(g);
  g.pad_to(32).zeros(data_bytes);
  return g.b;
}

TEST(GgufHostile, TensorShapes) {
  auto five = with_tensors(1, [](GgufBytes& g) { g.tensor_info("t5", {1, 1, 1, 1, 1}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(five, ErrorCode::kInvalidFile, {"offset 34", "tensor 't5'", "n_dims 5"}));
  auto none = with_tensors(1, [](GgufBytes& g) { g.tensor_info("t0", {}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(none, ErrorCode::kInvalidFile, {"offset 34", "tensor 't0'", "n_dims 0"}));
  auto zero = with_tensors(1, [](GgufBytes& g) { g.tensor_info("z", {4, 0}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(zero, ErrorCode::kInvalidFile, {"offset 45", "tensor 'z'", "dimension 1 is 0"}));
  auto overflow = with_tensors(1, [](GgufBytes& g) { g.tensor_info("big", {1ull << 32, 1ull << 31, 2}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(overflow, ErrorCode::kInvalidFile, {"offset 47", "tensor 'big'", "element count overflows at dimension 1"}));
  auto overflow_bytes = with_tensors(1, [](GgufBytes& g) { g.tensor_info("wide", {1ull << 62, 1}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(overflow_bytes, ErrorCode::kInvalidFile, {"offset 36", "tensor 'wide'", "byte size of 4611686018427387904 elements of F32 overflows"}));
  auto block = with_tensors(1, [](GgufBytes& g) { g.tensor_info("q", {33, 2}, 2, 0); }, 64);  // Q4_0
  EXPECT_TRUE(fails_with(block, ErrorCode::kInvalidFile,
                         {"offset 33", "tensor 'q'", "row length 33", "Q4_0 block size 32"}));
  auto fine = with_tensors(1, [](GgufBytes& g) { g.tensor_info("q", {64, 2}, 2, 0); }, 4 * 18);
  EXPECT_TRUE(parses(fine));
}

TEST(GgufHostile, UnknownTensorType) {
  // Removed ids (4, 31), the first id GGUF has not assigned (43), an internal layout's id (96:
  // Q4_K_IL, never valid in a file) and a huge one.
  for (uint32_t id : {4u, 31u, 43u, 96u, 0xffffffffu}) {
    auto bytes = with_tensors(1, [id](GgufBytes& g) { g.tensor_info("w", {8}, id, 0); }, 64);
    EXPECT_TRUE(fails_with(bytes, ErrorCode::kUnsupported,
                           {"offset 45", "tensor 'w'", "unknown tensor type id " + std::to_string(id)}));
  }
}

TEST(GgufHostile, TensorData) {
  auto beyond = with_tensors(1, [](GgufBytes& g) { g.tensor_info("w", {16}, 0, 0); }, 63);  // needs 64
  EXPECT_TRUE(fails_with(beyond, ErrorCode::kInvalidFile, {"offset 49", "tensor 'w'", "past the end"}));
  auto far = with_tensors(1, [](GgufBytes& g) { g.tensor_info("w", {1}, 0, 1ull << 60); }, 32);
  EXPECT_TRUE(fails_with(far, ErrorCode::kInvalidFile, {"offset 49", "tensor 'w'", "past the end"}));
  auto exact = with_tensors(1, [](GgufBytes& g) { g.tensor_info("w", {16}, 0, 0); }, 64);
  EXPECT_TRUE(parses(exact));

  GgufBytes no_data;  // tensor infos end the file: the data section would start past the end
  no_data.header(1, 0).tensor_info("w", {1}, 0, 0);
  EXPECT_TRUE(fails_with(no_data.b, ErrorCode::kInvalidFile, {"offset 57", "data section starts at 64"}));

  auto misaligned = with_tensors(1, [](GgufBytes& g) { g.tensor_info("w", {4}, 0, 16); }, 64);
  EXPECT_TRUE(fails_with(misaligned, ErrorCode::kInvalidFile,
                         {"offset 49", "tensor 'w'", "data offset 16 is not a multiple of the alignment 32"}));

  auto overlap = with_tensors(2, [](GgufBytes& g) {
    g.tensor_info("a", {16}, 0, 0).tensor_info("b", {16}, 0, 32);  // a spans [0, 64)
  }, 128);
  EXPECT_TRUE(fails_with(overlap, ErrorCode::kInvalidFile,
                         {"offset 82", "tensor 'b'", "overlaps tensor 'a' at [0, 64)"}));
  auto same = with_tensors(2, [](GgufBytes& g) {
    g.tensor_info("x", {8}, 0, 0).tensor_info("y", {8}, 0, 0);
  }, 64);
  EXPECT_TRUE(fails_with(same, ErrorCode::kInvalidFile, {"overlaps tensor"}));
  auto adjacent = with_tensors(2, [](GgufBytes& g) {
    g.tensor_info("b", {8}, 0, 32).tensor_info("a", {8}, 0, 0);  // out of order is fine
  }, 64);
  EXPECT_TRUE(parses(adjacent));

  auto dup = with_tensors(2, [](GgufBytes& g) {
    g.tensor_info("w", {8}, 0, 0).tensor_info("w", {8}, 0, 32);
  }, 64);
  EXPECT_TRUE(fails_with(dup, ErrorCode::kInvalidFile, {"offset 57", "tensor 'w'", "duplicate tensor name"}));
}

TEST(GgufHostile, NamesArePrintedSafely) {
  auto bytes = with_tensors(1, [](GgufBytes& g) { g.tensor_info(std::string_view("a\nb\x01", 4), {0}, 0, 0); }, 32);
  EXPECT_TRUE(fails_with(bytes, ErrorCode::kInvalidFile, {"tensor 'a\\x0ab\\x01'"}));
}

// ---- truncation: every prefix of a real file is an error, never a crash ----

TEST(GgufHostile, Stories260KTruncatedEverywhere) {
  const std::vector<uint8_t> good = stories();
  ASSERT_FALSE(good.empty());
  std::vector<size_t> cuts;
  for (size_t n = 0; n < 4096 && n < good.size(); ++n) cuts.push_back(n);
  for (size_t n = 4096; n < good.size(); n += 4999) cuts.push_back(n);
  for (size_t n = good.size() - 64; n < good.size(); ++n) cuts.push_back(n);  // inside the last tensor
  size_t failures = 0;
  for (size_t n : cuts) {
    auto r = parse_copy(std::span<const uint8_t>(good.data(), n), "cut.gguf");
    if (r.ok()) {
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
      continue;
    }
    const std::string& msg = r.status().message();
    if (msg.rfind("cut.gguf: offset ", 0) != 0) ADD_FAILURE() << "cut " << n << ": " << msg;
    ++failures;
  }
  EXPECT_EQ(failures, cuts.size());
}

// ---- random mutations: never a crash; every error carries the file name and an offset ----

// A small file using every construct: scalars, strings, arrays, nested arrays, two tensors.
std::vector<uint8_t> small_valid_file() {
  GgufBytes g;
  g.header(2, 5).kv_u32("general.alignment", 32).kv_string("general.name", "tiny");
  g.str("arr").u32(9).u32(8).u64(2).str("ab").str("");
  g.str("nest").u32(9).u32(9).u64(2).u32(5).u64(1).i32(-1).u32(7).u64(2).u8(1).u8(0);
  g.str("f").u32(6).put<float>(0.5f);
  g.tensor_info("a", {8}, 0, 0).tensor_info("b", {32, 1}, 8, 32);
  g.pad_to(32).zeros(32 + 34);
  return g.b;
}

TEST(GgufHostile, RandomMutations) {
  const std::vector<uint8_t> base = small_valid_file();
  ASSERT_TRUE(parses(base));
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&]() {  // xorshift64*: deterministic across platforms
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dull;
  };
  size_t n_errors = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = base;
    const int n_flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < n_flips; ++k) {
      const size_t at = static_cast<size_t>(next() % bytes.size());
      switch (next() % 3) {
        case 0: bytes[at] = static_cast<uint8_t>(next()); break;
        case 1: bytes[at] ^= static_cast<uint8_t>(1u << (next() % 8)); break;
        default: bytes[at] = 0xff; break;
      }
    }
    if (next() % 8 == 0) bytes.resize(static_cast<size_t>(next() % bytes.size()));
    auto r = parse_copy(bytes, "m.gguf");
    if (r.ok()) continue;
    ++n_errors;
    const std::string& msg = r.status().message();
    ASSERT_EQ(msg.rfind("m.gguf: offset ", 0), 0u) << msg;
  }
  EXPECT_GT(n_errors, 1000u);  // the mutations do reach the error paths
}

}  // namespace
}  // namespace ox::gguf
