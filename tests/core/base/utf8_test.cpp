// decode_utf8_at / append_utf8: every code point survives a round trip; malformed bytes give
// U+FFFD and consume one byte (llama.cpp's lenient decoding), never reading past the end.
#include "core/base/utf8.h"

#include <gtest/gtest.h>

namespace ox {
namespace {

TEST(Utf8, EveryCodePointRoundTrips) {
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    std::string s;
    append_utf8(s, cp);
    ASSERT_EQ(s.size(), cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u) << cp;
    size_t pos = 0;
    ASSERT_EQ(decode_utf8_at(s, pos), cp);
    ASSERT_EQ(pos, s.size());
  }
}

TEST(Utf8, MalformedBytesGiveReplacementOneByteAtATime) {
  struct Case {
    std::string bytes;
    uint32_t cp;
    size_t consumed;
  };
  const Case cases[] = {
      {"\x80", 0xFFFD, 1},              // stray continuation byte
      {"\xC3", 0xFFFD, 1},              // cut short at the end
      {"\xE2\x82", 0xFFFD, 1},          // cut short
      {"\xE2(\xAC", 0xFFFD, 1},         // bad continuation
      {"\xF8\x88\x80\x80", 0xFFFD, 1},  // no 5-byte forms
      {"\xF4\x90\x80\x80", 0xFFFD, 1},  // past U+10FFFF
      {"\xC0\xAF", 0x2F, 2},            // overlong: accepted as decoded, as llama.cpp does
      {"\xE2\x82\xAC", 0x20AC, 3},
  };
  for (const Case& c : cases) {
    size_t pos = 0;
    EXPECT_EQ(decode_utf8_at(c.bytes, pos), c.cp) << testing::PrintToString(c.bytes);
    EXPECT_EQ(pos, c.consumed) << testing::PrintToString(c.bytes);
  }
  std::string past;
  append_utf8(past, 0x110000);
  EXPECT_EQ(past, "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace ox
