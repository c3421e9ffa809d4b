// TextStream: UTF-8 characters split across pieces come out whole; stop strings are found across
// piece boundaries and nothing from the stop string on is released.
#include "core/session/text_stream.h"

#include <gtest/gtest.h>

namespace ox {
namespace {

std::string drain(TextStream& s) { return std::string(s.take()); }

TEST(TextStream, HoldsIncompleteUtf8) {
  TextStream s;
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600 in 4 bytes, fed one byte at a time
  std::string out;
  for (size_t i = 0; i < emoji.size(); ++i) {
    EXPECT_FALSE(s.push(emoji.substr(i, 1)));
    const std::string got = drain(s);
    if (i + 1 < emoji.size()) EXPECT_EQ(got, "") << "byte " << i;
    out += got;
  }
  EXPECT_EQ(out, emoji);
}

TEST(TextStream, StopStringAcrossPieces) {
  TextStream s({"</s>", "User:"});
  std::string out;
  EXPECT_FALSE(s.push("Hello Us"));
  out += drain(s);
  EXPECT_EQ(out, "Hello ");  // "Us" could start "User:"
  EXPECT_FALSE(s.push("ually"));
  out += drain(s);
  EXPECT_EQ(out, "Hello Usually");
  EXPECT_FALSE(s.push(" ok <"));
  out += drain(s);
  EXPECT_TRUE(s.push("/s> tail"));
  out += drain(s);
  EXPECT_EQ(out, "Hello Usually ok ");
  EXPECT_TRUE(s.push("more"));  // stays stopped
  EXPECT_EQ(drain(s), "");
}

TEST(TextStream, FinishReleasesHeldPrefix) {
  TextStream s({"STOP"});
  EXPECT_FALSE(s.push("abc ST"));
  EXPECT_EQ(drain(s), "abc ");
  s.finish();
  EXPECT_EQ(drain(s), "ST");
}

TEST(Utf8, CompletePrefix) {
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("ab\xC3"), 2u);
  EXPECT_EQ(complete_utf8_prefix("ab\xC3\xA9"), 4u);
  EXPECT_EQ(complete_utf8_prefix("\xE2\x82"), 0u);
  EXPECT_EQ(complete_utf8_prefix("\x80\x80"), 2u);  // stray continuation bytes are not waited on
}

}  // namespace
}  // namespace ox
