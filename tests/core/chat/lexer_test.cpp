// Lexer: token kinds, positions in code points, string escapes and the whitespace rules
// (trim_blocks, lstrip_blocks, -/+ markers) that decide the text between tags.
#include "core/chat/lexer.h"

#include <gtest/gtest.h>

namespace ox::chat {
namespace {

std::vector<Token> lex(const char* src) {
  Result<std::vector<Token>> t = tokenize(src);
  EXPECT_TRUE(t.ok()) << src << ": " << (t.ok() ? "" : t.status().message());
  return t.ok() ? *t : std::vector<Token>{};
}

std::string data_of(const char* src) {
  std::string out;
  for (const Token& t : lex(src)) {
    if (t.type == Tok::kData) out += "[" + t.text + "]";
  }
  return out;
}

TEST(Lexer, TokensAndPositions) {
  const std::vector<Token> t = lex("é {{ x.y|f(1, 2.5) }}\n{% if 'a' %}");
  ASSERT_EQ(t.size(), 19u);
  EXPECT_EQ(t[0].type, Tok::kData);
  EXPECT_EQ(t[1].type, Tok::kVarBegin);
  EXPECT_EQ(t[1].col, 3u);  // counted in code points: "é " is two
  EXPECT_EQ(t[2].text, "x");
  EXPECT_EQ(t[3].text, ".");
  EXPECT_EQ(t[8].type, Tok::kInt);
  EXPECT_EQ(t[8].int_value, 1);
  EXPECT_EQ(t[10].type, Tok::kFloat);
  EXPECT_EQ(t[10].float_value, 2.5);
  EXPECT_EQ(t[12].type, Tok::kVarEnd);
  EXPECT_EQ(t[13].text, "\n");
  EXPECT_EQ(t[14].type, Tok::kBlockBegin);
  EXPECT_EQ(t[14].line, 2u);
  EXPECT_EQ(t[16].type, Tok::kString);
  EXPECT_EQ(t[16].col, 7u);
  EXPECT_EQ(t[18].type, Tok::kEof);
}

TEST(Lexer, StringEscapesDecodeLikePython) {
  const std::vector<Token> t = lex(R"({{ 'a\n\t\\\'\x41\u00e9\U0001F999\101\q' "d\"q" }})");
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t[1].text, "a\n\t\\'Aé🦙A\\q");
  EXPECT_EQ(t[2].text, "d\"q");
}

TEST(Lexer, BracesInsideExpressionsDoNotEndTheTag) {
  const std::vector<Token> t = lex("{{ {'a': {'b': 1}} }}");
  ASSERT_EQ(t.back().type, Tok::kEof);
  EXPECT_EQ(t[t.size() - 2].type, Tok::kVarEnd);
  EXPECT_EQ(t[t.size() - 3].text, "}");
}

TEST(Lexer, WhitespaceRules) {
  EXPECT_EQ(data_of("a\n  {% if x %}\n  b\n  {% endif %}\nc"), "[a\n][  b\n][c]");  // lstrip + trim
  EXPECT_EQ(data_of("a  {% if x %}b"), "[a  ][b]");               // not at line start: kept
  EXPECT_EQ(data_of("a\n  {{ x }}\nb"), "[a\n  ][\nb]");             // {{ is never lstripped
  EXPECT_EQ(data_of("a \n {%- if x -%} \n b"), "[a][b]");          // - strips newlines too
  EXPECT_EQ(data_of("a\n  {%+ if x +%}\nb"), "[a\n  ][\nb]");      // + keeps both sides
  EXPECT_EQ(data_of("a\n  {# c #}\nb"), "[a\n][b]");               // comments behave like blocks
  EXPECT_EQ(data_of("x\r\ny\r\n"), "[x\ny]");                      // \r\n normalised, one trailing \n dropped
  EXPECT_EQ(data_of("{% raw %} {{ x }} {% endraw %}"), "[ {{ x }} ]");
}

TEST(Lexer, Errors) {
  EXPECT_EQ(tokenize("{{ x ) }}").status().message(), "line 1, column 6: unexpected ')'");
  EXPECT_EQ(tokenize("{% raw %}abc").status().message(), "line 1, column 1: missing end of raw directive");
  EXPECT_EQ(tokenize("\n\n  {{ 'x }}").status().message(), "line 3, column 6: unterminated string literal");
}

}  // namespace
}  // namespace ox::chat
