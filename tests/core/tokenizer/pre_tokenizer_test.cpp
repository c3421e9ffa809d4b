// Pre-tokenizer regex matchers against splits worked out by hand from each family's regex.
#include "core/tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

namespace ox::tok {
namespace {

std::vector<std::string> split(PreType pre, std::string_view text) {
  PreTokenized p;
  pre_tokenize(pre, text, &p);
  std::vector<std::string> out;
  uint32_t b = 0;
  for (uint32_t e : p.ends) {
    out.push_back(p.text.substr(b, e - b));
    b = e;
  }
  return out;
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Gpt2) {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  EXPECT_EQ(split(PreType::kGpt2, "Hello world's  test 123!!"),
            (Pieces{"Hello", " world", "'s", " ", " test", " 123", "!!"}));
  EXPECT_EQ(split(PreType::kGpt2, "I'LL\tgo  "), (Pieces{"I", "'", "LL", "\t", "go", "  "}));
  EXPECT_EQ(split(PreType::kGpt2, "\n\nx"), (Pieces{"\n", "\n", "x"}));
}

TEST(PreTokenizer, Llama3) {
  // Contractions any case, optional non-letter prefix on words, digits in threes, newlines
  // kept with preceding punctuation, whitespace runs ending in a newline kept whole.
  EXPECT_EQ(split(PreType::kLlama3, "I'LL pay 1234567 $5.\n\n  Next"),
            (Pieces{"I", "'LL", " pay", " ", "123", "456", "7", " $", "5", ".\n\n", " ", " Next"}));
  EXPECT_EQ(split(PreType::kLlama3, "(hello) \t\n x"), (Pieces{"(hello", ")", " \t\n", " x"}));
  EXPECT_EQ(split(PreType::kLlama3, "  end  "), (Pieces{" ", " end", "  "}));
}

TEST(PreTokenizer, Qwen2AndQwen35) {
  EXPECT_EQ(split(PreType::kQwen2, "ab 2024"), (Pieces{"ab", " ", "2", "0", "2", "4"}));
  // qwen2: a combining mark is not a letter, so it becomes the optional prefix of the next word;
  // qwen35 keeps combining marks inside words.
  EXPECT_EQ(split(PreType::kQwen2, "re\xCC\x81sume\xCC\x81"), (Pieces{"re", "\xCC\x81sume", "\xCC\x81"}));
  EXPECT_EQ(split(PreType::kQwen35, "re\xCC\x81sume\xCC\x81"), (Pieces{"re\xCC\x81sume\xCC\x81"}));
}

TEST(PreTokenizer, RegexListsApplyInTurn) {
  // Falcon: punctuation runs first, then GPT-2 within the rest, then ASCII digit triples.
  EXPECT_EQ(split(PreType::kFalcon, "a+=b 12345"), (Pieces{"a", "+=", "b", " ", "123", "45"}));
  // Starcoder: every digit alone first.
  EXPECT_EQ(split(PreType::kStarcoder, "x 42"), (Pieces{"x", " ", "4", "2"}));
  // Lookaheads see the end of the current piece: the space before "+" ends its piece.
  EXPECT_EQ(split(PreType::kDefault, "a  +b"), (Pieces{"a", "  ", "+", "b"}));
}

TEST(PreTokenizer, DeepseekCoderAndCjk) {
  EXPECT_EQ(split(PreType::kDeepseekCoder, "int x=10;\n\xE4\xB8\xAD\xE6\x96\x87ok"),
            (Pieces{"int", " x", "=", "1", "0", ";", "\n", "\xE4\xB8\xAD\xE6\x96\x87", "ok"}));
}

TEST(PreTokenizer, Gemma4SplitsOnlyNewlineRuns) {
  EXPECT_EQ(split(PreType::kGemma4, "a b\n\nc\n"), (Pieces{"a b", "\n\n", "c", "\n"}));
}

TEST(PreTokenizer, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(split(PreType::kGpt2, "a\xFF"), (Pieces{"a", "\xEF\xBF\xBD"}));
  PreTokenized p;
  pre_tokenize(PreType::kGpt2, "", &p);
  EXPECT_TRUE(p.ends.empty());
}

}  // namespace
}  // namespace ox::tok
