// StreamDecoder (no UTF-8 character is ever split, even across byte-fallback tokens) and
// StopMatcher (stop strings found across piece boundaries, text held back only while it may
// still be the start of one).
#include <gtest/gtest.h>

#include "core/tokenizer/stream_decoder.h"
#include "core/tokenizer/unicode.h"
#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

TEST(StreamDecoder, EmojiSplitOverByteTokensComesOutWhole) {
  const Tokenizer* spm = test::vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  // From the llama-spm vectors: " this is 🦙.cpp" = 29871 445 338 29871 243 162 169 156 29889 8223,
  // where 243 162 169 156 are the byte tokens <0xF0> <0x9F> <0xA6> <0x99> of U+1F999.
  StreamDecoder dec(*spm);
  std::vector<std::string> outs;
  for (int32_t id : {445, 338, 29871, 243, 162, 169, 156, 29889, 8223}) outs.push_back(dec.push(id).value());
  EXPECT_EQ(outs[0], " this");
  EXPECT_EQ(outs[1], " is");
  EXPECT_EQ(outs[2], " ");
  EXPECT_EQ(outs[3], "");
  EXPECT_EQ(outs[4], "");
  EXPECT_EQ(outs[5], "");
  EXPECT_EQ(outs[6], "\xF0\x9F\xA6\x99");
  EXPECT_EQ(outs[7], ".");
  EXPECT_EQ(outs[8], "cpp");
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamDecoder, EveryPrefixOfTheOutputIsValidUtf8) {
  const Tokenizer* spm = test::vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  const std::string text = "Grüße 🚀 нещо 我想在apple工作 😶\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F ok";
  const std::vector<int32_t> ids = spm->encode(text, false, false).value();
  StreamDecoder dec(*spm);
  std::string shown;
  for (int32_t id : ids) {
    const std::string part = dec.push(id).value();
    EXPECT_TRUE(is_valid_utf8(part)) << "token " << id;
    shown += part;
  }
  shown += dec.flush();
  EXPECT_EQ(shown, " " + text);  // pieces keep SentencePiece's leading space
}

TEST(StreamDecoder, UnfinishedSequenceIsHeldThenFlushed) {
  const Tokenizer* spm = test::vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  StreamDecoder dec(*spm);
  EXPECT_EQ(dec.push(3 + 0xE2).value(), "");  // <0xE2>: first of three bytes
  EXPECT_EQ(dec.push(3 + 0x82).value(), "");
  EXPECT_EQ(dec.flush(), "\xE2\x82");
  // A sequence interrupted by a new character is released as it is: it can never complete.
  EXPECT_EQ(dec.push(3 + 0xE2).value(), "");
  EXPECT_EQ(dec.push(3 + 'A').value(), "\xE2" "A");
  EXPECT_FALSE(dec.push(-1).ok());
}

TEST(Utf8Prefix, CountsCompleteCharacters) {
  EXPECT_EQ(complete_utf8_prefix(""), 0u);
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("a\xC3"), 1u);
  EXPECT_EQ(complete_utf8_prefix("a\xC3\xA9"), 3u);
  EXPECT_EQ(complete_utf8_prefix("a\xF0\x9F\xA6"), 1u);
  EXPECT_EQ(complete_utf8_prefix("a\xF0\x9F\xA6\x99"), 5u);
  EXPECT_EQ(complete_utf8_prefix("a\x80\x80"), 3u);  // stray continuation bytes
  EXPECT_EQ(complete_utf8_prefix("\xFF"), 1u);
}

// Feeds `pieces` one by one; returns the shown text and whether it stopped.
std::pair<std::string, bool> run(StopMatcher& m, std::initializer_list<std::string_view> pieces) {
  std::string shown;
  bool stopped = false;
  for (std::string_view p : pieces) {
    StopMatcher::Step s = m.push(p);
    shown += s.text;
    if (s.stopped) {
      stopped = true;
      break;
    }
  }
  if (!stopped) shown += m.flush();
  return {shown, stopped};
}

TEST(StopMatcher, FindsStopAcrossPieces) {
  StopMatcher m({"</answer>"});
  StopMatcher::Step a = m.push("The result is 42</ans");
  EXPECT_EQ(a.text, "The result is 42");  // "</ans" may be the start of the stop string
  EXPECT_FALSE(a.stopped);
  StopMatcher::Step b = m.push("wer>");
  EXPECT_TRUE(b.stopped);
  EXPECT_EQ(b.text, "");
  EXPECT_EQ(m.matched(), "</answer>");
  EXPECT_EQ(m.push("more").text, "");
}

TEST(StopMatcher, StopSpreadOverManyPieces) {
  StopMatcher m({"STOP"});
  auto [shown, stopped] = run(m, {"ab", "S", "T", "O", "P", "cd"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "ab");
}

TEST(StopMatcher, FalseStartIsReleased) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("a ST").text, "a ");
  EXPECT_EQ(m.push("ART").text, "START");
  auto [shown, stopped] = run(m, {" S", "TO"});
  EXPECT_FALSE(stopped);
  EXPECT_EQ(shown, " STO");  // flushed at the end
}

TEST(StopMatcher, FirstCompletedStopWins) {
  StopMatcher m({"abcd", "bc"});
  auto [shown, stopped] = run(m, {"xa", "b", "cd"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "xa");
  EXPECT_EQ(m.matched(), "bc");
}

TEST(StopMatcher, StopInsideOnePiece) {
  StopMatcher m({"\n\n", "User:"});
  StopMatcher::Step s = m.push("Sure.\n\nUser: hi");
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.text, "Sure.");
}

TEST(StopMatcher, NoStopStringsPassesEverything) {
  StopMatcher m({"", ""});
  EXPECT_EQ(m.push("abc").text, "abc");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, WorksOnTokenizerOutput) {
  const Tokenizer* llama3 = test::vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  const std::vector<int32_t> ids = llama3->encode("Answer: yes.\nQuestion: why?", false, false).value();
  StreamDecoder dec(*llama3);
  StopMatcher stop({"\nQuestion:"});
  std::string shown;
  bool stopped = false;
  for (int32_t id : ids) {
    StopMatcher::Step s = stop.push(dec.push(id).value());
    shown += s.text;
    if (s.stopped) {
      stopped = true;
      break;
    }
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "Answer: yes.");
}

}  // namespace
}  // namespace ox::tok
