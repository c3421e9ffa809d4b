// Hostile input: random bytes, every shared test string with random bytes flipped, and 1 MB of one
// repeated character (with a check that time grows about linearly: 1 MB vs 256 KB within a wide
// factor, a complexity check rather than a speed assertion). Nothing may crash, every id must be in
// range and decode must accept what encode produced.
#include <gtest/gtest.h>

#include <ctime>
#include <random>

#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

const char* const kFamilies[] = {"llama-spm", "llama-bpe", "qwen35", "gemma-4", "deepseek-llm",
                                 "deepseek-coder", "falcon", "mpt", "starcoder", "bert-bge", "nomic-bert-moe"};

void expect_sane(const Tokenizer& tok, std::string_view text, bool parse_special, const std::string& what) {
  auto ids = tok.encode(text, true, parse_special);
  ASSERT_TRUE(ids.ok()) << what << ": " << ids.status().message();
  for (int32_t id : *ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab()) << what << ": id " << id;
  ASSERT_TRUE(tok.decode(*ids, true).ok()) << what;
}

TEST(HostileInput, RandomBytes) {
  std::mt19937 rng(1234);
  for (const char* name : kFamilies) {
    const Tokenizer* tok = test::vocab_tokenizer(name);
    ASSERT_NE(tok, nullptr) << name;
    for (int round = 0; round < 20; ++round) {
      std::string text(1 + rng() % 300, '\0');
      for (char& c : text) c = static_cast<char>(rng() & 0xFF);
      expect_sane(*tok, text, round % 2 == 0, std::string(name) + " random round " + std::to_string(round));
    }
  }
}

TEST(HostileInput, SharedStringsWithFlippedBytes) {
  std::mt19937 rng(99);
  for (const char* name : kFamilies) {
    const Tokenizer* tok = test::vocab_tokenizer(name);
    ASSERT_NE(tok, nullptr) << name;
    std::vector<test::VocabCase> cases = test::read_vocab_cases(name);
    if (cases.empty()) cases = test::read_vocab_cases("llama-spm");  // vocabs without vectors of their own
    ASSERT_FALSE(cases.empty()) << name;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::string text = cases[i].text;
      if (text.empty()) continue;
      for (int flips = 1 + rng() % 4; flips > 0; --flips) text[rng() % text.size()] ^= static_cast<char>(1 + rng() % 255);
      expect_sane(*tok, text, true, std::string(name) + " case " + std::to_string(i));
    }
  }
}

// CPU seconds to encode `bytes` of repetitions of `unit`, best of two (process CPU time, so other
// load on the machine does not distort the ratio much).
double encode_seconds(const Tokenizer& tok, const std::string& unit, size_t bytes) {
  std::string text;
  text.reserve(bytes + unit.size());
  while (text.size() < bytes) text += unit;
  double best = 1e30;
  for (int rep = 0; rep < 2; ++rep) {
    const std::clock_t t0 = std::clock();
    auto ids = tok.encode(text, false, true);
    const std::clock_t t1 = std::clock();
    EXPECT_TRUE(ids.ok());
    best = std::min(best, static_cast<double>(t1 - t0) / CLOCKS_PER_SEC);
  }
  return best;
}

TEST(HostileInput, OneMegabyteOfOneCharacterScalesLinearly) {
  constexpr size_t kSmall = 256 * 1024, kLarge = 1024 * 1024;
  // One giant word (letters), whitespace and newline runs, digits, CJK and a 4-byte character,
  // each on a family whose code path it stresses.
  const struct {
    const char* vocab;
    const char* unit;
  } runs[] = {
      {"llama-spm", "a"}, {"llama-spm", "\xF0\x9F\x98\x80"}, {"llama-bpe", "a"}, {"llama-bpe", " "},
      {"gemma-4", "a"}, {"gemma-4", "\n"}, {"deepseek-llm", "\xE4\xB8\xAD"}, {"mpt", " "},
      {"mpt", "7"}, {"bert-bge", "7"}, {"nomic-bert-moe", "a"}, {"nomic-bert-moe", " "},
  };
  for (const auto& r : runs) {
    const Tokenizer* tok = test::vocab_tokenizer(r.vocab);
    ASSERT_NE(tok, nullptr) << r.vocab;
    const double small = encode_seconds(*tok, r.unit, kSmall);
    const double large = encode_seconds(*tok, r.unit, kLarge);
    // Linear work gives 4x, quadratic 16x; the margin absorbs timer noise on short runs.
    EXPECT_LT(large, 10.0 * small + 0.05) << r.vocab << " unit [" << r.unit << "]: " << small
                                           << " s for 256 KB, " << large << " s for 1 MB";
  }
}

}  // namespace
}  // namespace ox::tok
