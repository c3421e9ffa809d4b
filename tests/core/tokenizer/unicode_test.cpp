// Generated Unicode tables and UTF-8 handling, against facts from the Unicode standard.
#include "core/tokenizer/unicode.h"

#include <gtest/gtest.h>

namespace ox::tok {
namespace {

TEST(Unicode, GeneralCategories) {
  EXPECT_EQ(general_category('A'), GeneralCategory::Lu);
  EXPECT_EQ(general_category(0xE9), GeneralCategory::Ll);     // é
  EXPECT_EQ(general_category('3'), GeneralCategory::Nd);
  EXPECT_EQ(general_category(0x2163), GeneralCategory::Nl);   // Ⅳ
  EXPECT_EQ(general_category(0x3002), GeneralCategory::Po);   // 。
  EXPECT_EQ(general_category('$'), GeneralCategory::Sc);
  EXPECT_EQ(general_category(0x0301), GeneralCategory::Mn);   // combining acute
  EXPECT_EQ(general_category(0x4E00), GeneralCategory::Lo);   // CJK range entry in UnicodeData
  EXPECT_EQ(general_category(0x9FA5), GeneralCategory::Lo);
  EXPECT_EQ(general_category(0xAC01), GeneralCategory::Lo);   // Hangul syllable range
  EXPECT_EQ(general_category(0x1F600), GeneralCategory::So);  // 😀
  EXPECT_EQ(general_category(0xE000), GeneralCategory::Co);
  EXPECT_EQ(general_category(0xD800), GeneralCategory::Cs);
  EXPECT_EQ(general_category(0x200D), GeneralCategory::Cf);   // zero width joiner
  EXPECT_EQ(general_category(0x0378), GeneralCategory::Cn);   // unassigned
  EXPECT_EQ(general_category(0x110000), GeneralCategory::Cn);
}

TEST(Unicode, ClassesAndWhitespace) {
  EXPECT_EQ(cp_class('a'), kCpLetter);
  EXPECT_EQ(cp_class(' '), kCpSeparator | kCpWhitespace);
  EXPECT_EQ(cp_class('\n'), kCpControl | kCpWhitespace);
  EXPECT_EQ(cp_class(0x85), kCpControl | kCpWhitespace);
  EXPECT_EQ(cp_class(0x3000), kCpSeparator | kCpWhitespace);
  EXPECT_EQ(cp_class(0x200B), kCpControl);  // zero width space is Cf, not White_Space
  EXPECT_EQ(cp_class(0x1C), kCpControl);    // not White_Space (unlike Python's str.isspace)
  EXPECT_EQ(cp_class(0xE000), kCpControl);
  EXPECT_EQ(cp_class(0x10FFFF), kCpUndefined);
  EXPECT_EQ(cp_class(0x1F600), kCpSymbol);
  EXPECT_EQ(cp_class('_'), kCpPunctuation);
}

TEST(Unicode, LowerCaseAndNfd) {
  EXPECT_EQ(to_lower('Q'), static_cast<uint32_t>('q'));
  EXPECT_EQ(to_lower(0x3A3), 0x3C3u);    // Σ -> σ
  EXPECT_EQ(to_lower(0x130), 0x69u);     // İ -> i (simple mapping)
  EXPECT_EQ(to_lower(0x410), 0x430u);    // А -> а
  EXPECT_EQ(to_lower(0x4E00), 0x4E00u);
  EXPECT_EQ(nfd_first(0xE9), static_cast<uint32_t>('e'));  // é
  EXPECT_EQ(nfd_first(0x1EC7), static_cast<uint32_t>('e'));  // ệ decomposes twice
  EXPECT_EQ(nfd_first(0xD55C), 0x1112u);  // 한: leading jamo
  EXPECT_EQ(nfd_first('a'), static_cast<uint32_t>('a'));
  EXPECT_EQ(nfd_first(0x212B), static_cast<uint32_t>('A'));  // Å (angstrom sign)
}

TEST(Unicode, LenientDecodingMatchesLlamaCpp) {
  std::vector<uint32_t> cps;
  decode_utf8("a\xC3\xA9\xF0\x9F\x98\x80", cps);
  EXPECT_EQ(cps, (std::vector<uint32_t>{'a', 0xE9, 0x1F600}));
  decode_utf8("\xC0\x80", cps);  // overlong NUL is accepted as decoded
  EXPECT_EQ(cps, (std::vector<uint32_t>{0}));
  decode_utf8("\xED\xA0\x80", cps);  // surrogate accepted
  EXPECT_EQ(cps, (std::vector<uint32_t>{0xD800}));
  decode_utf8("\xE2\x82", cps);  // cut short: one U+FFFD per byte
  EXPECT_EQ(cps, (std::vector<uint32_t>{kReplacementChar, kReplacementChar}));
  decode_utf8("\xF4\x90\x80\x80", cps);  // past U+10FFFF
  EXPECT_EQ(cps.size(), 4u);
  EXPECT_EQ(cps[0], kReplacementChar);
  decode_utf8("\xFF\x80x", cps);
  EXPECT_EQ(cps, (std::vector<uint32_t>{kReplacementChar, kReplacementChar, 'x'}));
}

TEST(Unicode, EncodingAndValidation) {
  std::string s;
  append_utf8(s, 0x24);
  append_utf8(s, 0xA2);
  append_utf8(s, 0x20AC);
  append_utf8(s, 0x10348);
  EXPECT_EQ(s, "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));
}

TEST(Unicode, Gpt2ByteAlphabet) {
  EXPECT_EQ(byte_to_gpt2_cp(' '), 0x120u);  // Ġ
  EXPECT_EQ(byte_to_gpt2_cp('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(byte_to_gpt2_cp('A'), static_cast<uint32_t>('A'));
  EXPECT_EQ(byte_to_gpt2_cp(0xAD), 0x143u);  // soft hyphen is the last remapped byte
  for (uint32_t b = 0; b < 256; ++b) EXPECT_EQ(gpt2_cp_to_byte(byte_to_gpt2_cp(static_cast<uint8_t>(b))), static_cast<int32_t>(b));
  EXPECT_EQ(gpt2_cp_to_byte(0x4E00), -1);
}

}  // namespace
}  // namespace ox::tok
