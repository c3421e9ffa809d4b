// Special-token splitting: longest texts first, user-defined tokens without parse_special,
// whitespace stripping by LSTRIP/RSTRIP tokens. Ids are the vocab files' own.
#include <gtest/gtest.h>

#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

using Ids = std::vector<int32_t>;

Ids encode(const Tokenizer& tok, std::string_view text, bool parse_special) {
  return tok.encode(text, false, parse_special).value();
}

Ids concat_ids(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(SpecialSplit, LongestUserDefinedTextWins) {
  // mpt lists runs of 2..24 spaces as user-defined tokens: 50274 is four spaces, 50276 two.
  const Tokenizer* mpt = test::vocab_tokenizer("mpt");
  ASSERT_NE(mpt, nullptr);
  ASSERT_EQ(mpt->token_text(50274), "    ");
  ASSERT_EQ(mpt->token_text(50276), "  ");
  EXPECT_EQ(encode(*mpt, "a    b", false), concat_ids({encode(*mpt, "a", false), {50274}, encode(*mpt, "b", false)}));
  // Six spaces: the six-space token (50272) is longer than any split of them.
  ASSERT_EQ(mpt->token_text(50272), "      ");
  EXPECT_EQ(encode(*mpt, "a      b", false), concat_ids({encode(*mpt, "a", false), {50272}, encode(*mpt, "b", false)}));
}

TEST(SpecialSplit, ControlTokensNeedParseSpecial) {
  const Tokenizer* qwen = test::vocab_tokenizer("qwen2");
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(encode(*qwen, "<|im_end|>", true), (Ids{151645}));
  const Ids literal = encode(*qwen, "<|im_end|>", false);
  EXPECT_GT(literal.size(), 1u);
  EXPECT_EQ(qwen->decode(literal, false).value(), "<|im_end|>");
  // Adjacent and repeated special tokens.
  EXPECT_EQ(encode(*qwen, "<|im_start|><|im_end|><|im_end|>", true), (Ids{151644, 151645, 151645}));
}

TEST(SpecialSplit, Phi3SpecialTokensStripFollowingWhitespace) {
  // llama.cpp gives phi-3's special tokens RSTRIP: "<|user|>\n  Hi" loses the whitespace after
  // the marker, and SentencePiece then starts "Hi" as a new word.
  const Tokenizer* phi3 = test::vocab_tokenizer("phi-3");
  ASSERT_NE(phi3, nullptr);
  const int32_t hi = phi3->find_token("\xE2\x96\x81Hi");
  ASSERT_GE(hi, 0);
  EXPECT_EQ(encode(*phi3, "<|user|>\n  Hi", true), (Ids{32010, hi}));
  EXPECT_EQ(encode(*phi3, "<|user|>Hi", true), (Ids{32010, hi}));
}

TEST(SpecialSplit, EmptyAndSpecialOnlyTexts) {
  const Tokenizer* llama3 = test::vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  EXPECT_EQ(encode(*llama3, "", true), Ids{});
  EXPECT_EQ(encode(*llama3, "<|eot_id|>", true), (Ids{128009}));
  // A special text cut short is plain text.
  const Ids partial = encode(*llama3, "<|eot_id|", true);
  EXPECT_EQ(std::count(partial.begin(), partial.end(), 128009), 0);
}

}  // namespace
}  // namespace ox::tok
