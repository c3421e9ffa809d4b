// Every llama.cpp tokenizer test vector in ../shared/vocab: ids must match exactly (encoded without
// BOS/EOS and without special-token parsing, as llama.cpp's test-tokenizer-0 does), and the text
// must come back from the ids wherever the tokenizer is lossless. Prints a per-vocab pass table.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

using test::read_vocab_cases;
using test::vocab_tokenizer;

struct Tally {
  size_t cases = 0, passed = 0, roundtrip_checked = 0, roundtrip_passed = 0;
};

std::map<std::string, Tally>& tallies() {
  static std::map<std::string, Tally> t;
  return t;
}

// Concatenated raw pieces (no detokenizer clean-up): for byte-level BPE and SentencePiece this is
// the input itself, byte for byte.
std::string join_pieces(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += tok.token_to_piece(id, false).value();
  return s;
}

bool has_cleanup_pattern(const std::string& s) {
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i - 1] == ' ' && (s[i] == '?' || s[i] == '!' || s[i] == '.' || s[i] == ',' || s[i] == '\'')) return true;
  }
  return false;
}

class VocabVectors : public ::testing::TestWithParam<const char*> {
 protected:
  static void TearDownTestSuite() {
    std::printf("\n%-16s %6s %7s %10s\n", "vocab", "cases", "passed", "roundtrip");
    for (const auto& [name, t] : tallies()) {
      std::printf("%-16s %6zu %7zu %4zu/%-5zu\n", name.c_str(), t.cases, t.passed, t.roundtrip_passed,
                  t.roundtrip_checked);
    }
    std::fflush(stdout);
  }
};

TEST_P(VocabVectors, IdsMatchLlamaCpp) {
  const std::string name = GetParam();
  const std::vector<test::VocabCase> cases = read_vocab_cases(name);
  ASSERT_FALSE(cases.empty()) << "no test vectors for " << name;
  const Tokenizer* tok = vocab_tokenizer(name);
  ASSERT_NE(tok, nullptr);
  Tally& tally = tallies()[name];
  tally = Tally{};
  int reported = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const test::VocabCase& c = cases[i];
    auto ids = tok->encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    ++tally.cases;
    if (*ids == c.ids) {
      ++tally.passed;
    } else if (reported++ < 5) {
      ADD_FAILURE() << name << " case " << i << " text [" << c.text << "]\n  expected " << test::ids_to_string(c.ids)
                    << "\n  got      " << test::ids_to_string(*ids);
    }
    // Round trip: WordPiece lower-cases and drops accents, so it is not lossless.
    if (tok->kind() == TokenizerKind::kWordPiece) continue;
    ++tally.roundtrip_checked;
    bool ok = join_pieces(*tok, c.ids) == c.text || tok->kind() == TokenizerKind::kSentencePiece;
    auto text = tok->decode(c.ids, false);
    ASSERT_TRUE(text.ok());
    // decode() also applies llama.cpp's space clean-up for some BPE families; compare it only
    // where that clean-up has nothing to do.
    if (!has_cleanup_pattern(c.text)) ok = ok && *text == c.text;
    if (ok) {
      ++tally.roundtrip_passed;
    } else if (reported++ < 5) {
      ADD_FAILURE() << name << " case " << i << " does not round-trip: [" << c.text << "] -> [" << *text << "]";
    }
  }
  EXPECT_EQ(tally.passed, tally.cases) << name;
}

INSTANTIATE_TEST_SUITE_P(AllVocabs, VocabVectors,
                         ::testing::Values("llama-spm", "phi-3", "gemma-4", "llama-bpe", "qwen2", "qwen35",
                                           "deepseek-llm", "deepseek-coder", "falcon", "gpt-2", "mpt",
                                           "starcoder", "refact", "command-r", "bert-bge"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

// Vocabularies without test vectors must still load and tokenize something sensible.
TEST(VocabLoad, FamiliesWithoutVectorsLoad) {
  for (const char* name : {"gpt-neox", "aquila", "baichuan"}) {
    const Tokenizer* tok = vocab_tokenizer(name);
    ASSERT_NE(tok, nullptr) << name;
    auto ids = tok->encode("Hello world", false, false);
    ASSERT_TRUE(ids.ok()) << name;
    EXPECT_FALSE(ids->empty()) << name;
    EXPECT_EQ(tok->decode(*ids, false).value(), "Hello world") << name;
  }
}

}  // namespace
}  // namespace ox::tok
