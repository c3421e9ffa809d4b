// Hard text (Devanagari vowel signs and viramas, Thai, Arabic harakat, NFD accents, Korean, CJK,
// emoji sequences, control and format characters, whitespace variants, very long words, bad UTF-8)
// through the WordPiece and Unigram vocabularies: ids must equal llama.cpp's, which
// tests/data/tokenizer/make_reference.sh wrote with llama.cpp's own tokenizer. bert-bge also runs
// with its BertNormalizer and special-token metadata overridden, against llama.cpp run with the same
// overrides.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/gguf/writer.h"
#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

// Printable form of a text for failure messages: non-ASCII and control bytes as \xNN.
std::string escaped(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string e;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F) {
      e += static_cast<char>(c);
    } else {
      e += "\\x";
      e += kHex[c >> 4];
      e += kHex[c & 15];
    }
  }
  return e;
}

// Every case of hard_cases.`out_name`.out through `tok`; one failure per differing case.
void expect_llama_cpp_ids(const Tokenizer& tok, const std::string& out_name, bool add_special) {
  const std::vector<test::VocabCase> cases =
      test::read_cases(test::source_path("tests/data/tokenizer/hard_cases.inp"),
                       test::source_path("tests/data/tokenizer/hard_cases." + out_name + ".out"), out_name);
  ASSERT_GE(cases.size(), 40u) << "hard_cases.inp / hard_cases." << out_name << ".out missing or short";
  size_t passed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto ids = tok.encode(cases[i].text, add_special, /*parse_special=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    if (*ids == cases[i].ids) {
      ++passed;
    } else {
      ADD_FAILURE() << out_name << " case " << i << " [" << escaped(cases[i].text) << "]\n  llama.cpp "
                    << test::ids_to_string(cases[i].ids) << "\n  oxidize   " << test::ids_to_string(*ids);
    }
  }
  EXPECT_EQ(passed, cases.size()) << out_name;
}

class HardCases : public ::testing::TestWithParam<const char*> {};

TEST_P(HardCases, IdsMatchLlamaCpp) {
  const std::string name = GetParam();
  if (!test::file_exists(test::vocab_path(name))) GTEST_SKIP() << "no " << test::vocab_path(name);
  const Tokenizer* tok = test::vocab_tokenizer(name);
  ASSERT_NE(tok, nullptr);
  expect_llama_cpp_ids(*tok, name, /*add_special=*/false);
}

INSTANTIATE_TEST_SUITE_P(WordPieceAndUnigram, HardCases, ::testing::Values("bert-bge", "nomic-bert-moe"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

// bert-bge's metadata with boolean keys set (added, or replacing the file's), as llama.cpp's
// kv_overrides do; the tokenizer loaded from that.
std::unique_ptr<Tokenizer> bert_with(const std::vector<std::pair<std::string, bool>>& overrides) {
  auto file = gguf::GgufFile::open(test::vocab_path("bert-bge"));
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  gguf::GgufWriter w;
  for (const auto& [key, value] : (*file)->metadata()) {
    bool overridden = false;
    for (const auto& o : overrides) overridden = overridden || o.first == key;
    if (!overridden) {
      EXPECT_TRUE(w.add(key, gguf::encode_value(value)).is_ok()) << key;
    }
  }
  for (const auto& [key, value] : overrides) EXPECT_TRUE(w.add_bool(key, value).is_ok()) << key;
  auto bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  if (!bytes.ok()) return nullptr;
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  auto parsed = gguf::GgufFile::parse(*owned, "bert-bge (overridden)", owned);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return nullptr;
  auto tok = Tokenizer::from_gguf(**parsed);
  EXPECT_TRUE(tok.ok()) << tok.status().message();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

struct BertVariant {
  const char* out_name;  // hard_cases.OUT_NAME.out
  bool add_special;
  std::vector<std::pair<std::string, bool>> overrides;
};

void PrintTo(const BertVariant& v, std::ostream* os) { *os << v.out_name; }

class BertVariants : public ::testing::TestWithParam<BertVariant> {};

TEST_P(BertVariants, IdsMatchLlamaCpp) {
  if (!test::file_exists(test::vocab_path("bert-bge"))) GTEST_SKIP() << "no " << test::vocab_path("bert-bge");
  const BertVariant& v = GetParam();
  std::unique_ptr<Tokenizer> tok = bert_with(v.overrides);
  ASSERT_NE(tok, nullptr);
  expect_llama_cpp_ids(*tok, v.out_name, v.add_special);
}

constexpr const char* kLower = "tokenizer.ggml.normalizer.lowercase";
constexpr const char* kStrip = "tokenizer.ggml.normalizer.strip_accents";

INSTANTIATE_TEST_SUITE_P(
    Bert, BertVariants,
    ::testing::Values(
        // lowercase off: accents are kept too (strip_accents follows lowercase unless given)
        BertVariant{"bert-bge.normalizer.lowercase-false", false, {{kLower, false}}},
        BertVariant{"bert-bge.normalizer.strip_accents-false", false, {{kStrip, false}}},
        BertVariant{"bert-bge.normalizer.lowercase-false.normalizer.strip_accents-true", false,
                    {{kLower, false}, {kStrip, true}}},
        // [CLS] ... [SEP] whatever add_bos_token / add_sep_token say
        BertVariant{"bert-bge.special", true, {}},
        BertVariant{"bert-bge.special.add_bos_token-false.add_sep_token-false", true,
                    {{"tokenizer.ggml.add_bos_token", false}, {"tokenizer.ggml.add_sep_token", false}}}),
    [](const ::testing::TestParamInfo<BertVariant>& info) {
      std::string n = info.param.out_name;
      for (char& ch : n) {
        if (ch == '-' || ch == '.') ch = '_';
      }
      return n;
    });

// A 4-byte sequence past U+10FFFF makes llama.cpp's WordPiece abort (unicode_cpt_to_utf8 throws),
// so there is no reference for it. It must go the way of the bad UTF-8 llama.cpp does read (U+FFFD,
// dropped): the ids are llama.cpp's for "hello  xy world", 7592 1060 2100 2088.
TEST(HardCases, WordPiecePastMaxCodePointIsDropped) {
  if (!test::file_exists(test::vocab_path("bert-bge"))) GTEST_SKIP() << "no " << test::vocab_path("bert-bge");
  const Tokenizer* tok = test::vocab_tokenizer("bert-bge");
  ASSERT_NE(tok, nullptr);
  auto ids = tok->encode("hello \xF4\x90\x80\x80 x\xF7\xBF\xBF\xBFy world", false, false);
  ASSERT_TRUE(ids.ok()) << ids.status().message();
  EXPECT_EQ(*ids, (std::vector<int32_t>{7592, 1060, 2100, 2088}));
}

}  // namespace
}  // namespace ox::tok
