// GBNF parser: what llama.cpp's parser accepts parses, and every malformed grammar is an error
// naming line and column (or the rule at fault), never a crash or a hang.
#include "core/sampler/grammar_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace ox {
namespace {

Grammar parse_ok(const std::string& text) {
  Result<Grammar> g = parse_grammar(text);
  EXPECT_TRUE(g.ok()) << text << "\n -> " << g.status().message();
  return g.ok() ? std::move(g).value() : Grammar{};
}

std::string parse_error(const std::string& text) {
  Result<Grammar> g = parse_grammar(text);
  EXPECT_FALSE(g.ok()) << "accepted: " << text;
  return g.ok() ? std::string() : g.status().message();
}

TEST(GrammarParser, SingleLiteral) {
  const Grammar g = parse_ok("root ::= \"ab\"");
  ASSERT_EQ(g.rules.size(), 1u);
  const std::vector<GrammarElement> want = {{GrammarOp::kChar, 'a'}, {GrammarOp::kChar, 'b'}, {GrammarOp::kEnd, 0}};
  EXPECT_EQ(g.rules[0], want);
}

TEST(GrammarParser, CharClassesRangesAndNegation) {
  const Grammar g = parse_ok("root ::= [a-z0_] [^\\n\"]");
  const std::vector<GrammarElement> want = {
      {GrammarOp::kChar, 'a'},    {GrammarOp::kCharRngUpper, 'z'}, {GrammarOp::kCharAlt, '0'},
      {GrammarOp::kCharAlt, '_'}, {GrammarOp::kCharNot, '\n'},     {GrammarOp::kCharAlt, '"'},
      {GrammarOp::kEnd, 0}};
  EXPECT_EQ(g.rules[0], want);
}

TEST(GrammarParser, EscapesAndUtf8) {
  const Grammar g = parse_ok("root ::= \"\\x41\\u00e9\\U0001F600\\n\\r\\t\\\\\\\"\\[\\]\\-é\"");
  std::vector<uint32_t> cps;
  for (const GrammarElement& e : g.rules[0]) {
    if (e.op == GrammarOp::kChar) cps.push_back(e.value);
  }
  const std::vector<uint32_t> want = {0x41, 0xE9, 0x1F600, '\n', '\r', '\t', '\\', '"', '[', ']', '-', 0xE9};
  EXPECT_EQ(cps, want);
}

TEST(GrammarParser, RepetitionsBecomeRules) {
  // "a"* -> root_1 ::= "a" root_1 | ; the same rewrite as llama.cpp.
  const Grammar g = parse_ok("root ::= \"a\"*");
  ASSERT_EQ(g.rules.size(), 2u);
  EXPECT_EQ(g.rule_names[1], "root_1");
  const std::vector<GrammarElement> rec = {{GrammarOp::kChar, 'a'}, {GrammarOp::kRuleRef, 1}, {GrammarOp::kAlt, 0},
                                           {GrammarOp::kEnd, 0}};
  EXPECT_EQ(g.rules[1], rec);
  for (const char* text : {"root ::= \"a\"+", "root ::= \"a\"?", "root ::= \"a\"{3}", "root ::= \"a\"{2,}",
                           "root ::= \"a\"{0,5}", "root ::= \"a\"{ 1 , 3 }", "root ::= (\"a\" | \"b\"){2,3} x\nx ::= \"c\""}) {
    parse_ok(text);
  }
}

TEST(GrammarParser, CommentsNewlinesGroupsAnyAndMultipleRules) {
  parse_ok("# a comment\nroot ::= item+ # trailing\n\n# more\nitem ::= (\n  \"a\"\n  | [b-c] # inside\n) .\r\n");
  parse_ok("root ::= \"a\" |\n  \"b\"");  // '|' at the end of a line continues the rule
  parse_ok("root ::= \"\"");              // the empty string is a sentence
  // After '|' newlines are skipped, so the next line's rule name joins this rule (as llama.cpp).
  EXPECT_NE(parse_error("root ::= x | \nx ::= \"a\"").find("line 2, column 3"), std::string::npos);
}

TEST(GrammarParser, TokenReferences) {
  GrammarParseOptions options;
  options.lookup_token = [](std::string_view text) -> std::optional<int32_t> {
    if (text == "<|im_end|>") return 7;
    return std::nullopt;
  };
  Result<Grammar> g = parse_grammar("root ::= <[12]> \"x\" !<[3]> <|im_end|>", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::vector<GrammarElement> want = {{GrammarOp::kToken, 12}, {GrammarOp::kChar, 'x'}, {GrammarOp::kTokenNot, 3},
                                            {GrammarOp::kToken, 7}, {GrammarOp::kEnd, 0}};
  EXPECT_EQ(g->rules[0], want);
  Result<Grammar> unknown = parse_grammar("root ::= <|nope|>", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("line 1, column 10: invalid token '<|nope|>'"), std::string::npos);
  Result<Grammar> no_vocab = parse_grammar("root ::= <|im_end|>");
  EXPECT_FALSE(no_vocab.ok());
}

TEST(GrammarParser, SyntaxErrorsNameLineAndColumn) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"root ::= \"ab", "line 1, column 10: unterminated string literal"},
      {"root := \"a\"", "line 1, column 6: expecting ::="},
      {"root ::= \"a\"\nitem ::= [a-", "line 2, column 10: unterminated character class"},
      {"root ::= \"\\q\"", "line 1, column 11: unknown escape"},
      {"root ::= \"\\x4\"", "line 1, column 14: expecting 2 hex chars"},
      {"root ::= *", "line 1, column 10: expecting preceding item"},
      {"root ::= \"a\"{3,2}", "line 1, column 13: repetition maximum below its minimum"},
      {"root ::= \"a\"{2001}", "line 1, column 13: number of repetitions exceeds 2000"},
      {"root ::= \"a\"{x}", "line 1, column 14: expecting an int"},
      {"root ::= ((\"a\")", "line 1, column 16: expecting ')'"},
      {"root ::= \"a\" )", "line 1, column 14: expecting newline or end"},
      {"root ::= \"a\"\n  | \"b\"", "line 2, column 3: expecting rule name"},
      {"root ::= []", "line 1, column 10: empty character class"},
      {"root ::= <[99999999999]>", "line 1, column 12: token id out of range"},
      {"\n\n  ::= \"a\"", "line 3, column 3: expecting rule name"},
  };
  for (const Case& c : cases) {
    const std::string message = parse_error(c.text);
    EXPECT_NE(message.find(c.want), std::string::npos) << c.text << "\n got: " << message << "\n want: " << c.want;
  }
}

TEST(GrammarParser, SemanticErrors) {
  EXPECT_NE(parse_error("root ::= item\nitem ::= \"a\" other").find("undefined rule 'other' (referenced at line 2, column 14)"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= root \"a\" | \"b\"").find("left recursion in rule 'root'"), std::string::npos);
  EXPECT_NE(parse_error("root ::= x \"a\"\nx ::= y\ny ::= \"\" | root").find("left recursion"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"* root").find("left recursion"), std::string::npos);  // "a"* may be empty
  EXPECT_NE(parse_error("root ::= \"a\" root").find("can never complete"), std::string::npos);
  EXPECT_NE(parse_error("root ::= x\nx ::= \"y\" x").find("can never complete"), std::string::npos);
  EXPECT_NE(parse_error("item ::= \"a\"").find("no rule named 'root'"), std::string::npos);
  EXPECT_NE(parse_error("").find("empty grammar"), std::string::npos);
  EXPECT_NE(parse_error("  # only a comment\n").find("empty grammar"), std::string::npos);
  EXPECT_NE(parse_error(std::string("root ::= \"a\0\"", 13)).find("NUL byte"), std::string::npos);
}

TEST(GrammarParser, HostileInputsEndInErrors) {
  std::string deep = "root ::= " + std::string(5000, '(') + "\"a\"" + std::string(5000, ')');
  EXPECT_NE(parse_error(deep).find("nested deeper"), std::string::npos);
  // Repetitions of repetitions: llama.cpp's bound on generated rules.
  EXPECT_NE(parse_error("root ::= ((\"a\"{0,100}){0,100})").find("repetition too large"), std::string::npos);
  // A long literal repeated 2000 times stays under the element cap, one much longer does not.
  parse_ok("root ::= \"" + std::string(100, 'a') + "\"{2000}");
  EXPECT_NE(parse_error("root ::= \"" + std::string(4000, 'a') + "\"{2000}").find("too large"), std::string::npos);
}

TEST(GrammarParser, LocationCountsLinesAndColumns) {
  EXPECT_EQ(grammar_location("ab\ncd\nef", 0), "line 1, column 1");
  EXPECT_EQ(grammar_location("ab\ncd\nef", 4), "line 2, column 2");
  EXPECT_EQ(grammar_location("ab\ncd\nef", 6), "line 3, column 1");
}

}  // namespace
}  // namespace ox
