// GrammarConstraint: strings a grammar must accept or refuse (expected outcomes worked out from
// the grammar by hand, in the spirit of llama.cpp's test-grammar-integration), token-level
// behaviour (partial UTF-8, control and end-of-generation tokens, token references), and masks
// over random grammars and vocabularies checked against a naive token-by-token reference.
#include "core/sampler/grammar_constraint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "core/sampler/grammar_parser.h"
#include "tests/core/sampler/grammar_reference.h"

namespace ox {
namespace {

// Every single byte as a token: text goes through byte by byte, splitting UTF-8 sequences.
std::shared_ptr<const TokenTrie> byte_vocab() {
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
  return TokenTrie::build(std::move(pieces));
}

std::unique_ptr<GrammarConstraint> constraint(const std::string& gbnf, std::shared_ptr<const TokenTrie> trie,
                                              std::vector<int32_t> eog = {}) {
  GrammarParseOptions options;
  const TokenTrie* vocab = trie.get();
  options.lookup_token = [vocab](std::string_view text) { return vocab->find(text); };
  Result<Grammar> g = parse_grammar(gbnf, options);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return nullptr;
  auto c = GrammarConstraint::create(std::move(g).value(), std::move(trie), eog);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

// True if `text` is a complete sentence: every byte allowed by the mask, then can_end().
bool matches(const std::string& gbnf, const std::string& text) {
  static const std::shared_ptr<const TokenTrie> vocab = byte_vocab();
  auto c = constraint(gbnf, vocab);
  if (c == nullptr) return false;
  for (unsigned char b : text) {
    if (!c->allowed_tokens()[b]) return false;
    EXPECT_TRUE(c->accept(b).is_ok());
  }
  return c->can_end();
}

void expect_language(const std::string& gbnf, std::vector<std::string> pass, std::vector<std::string> fail) {
  for (const std::string& s : pass) EXPECT_TRUE(matches(gbnf, s)) << gbnf << "\n should accept: '" << s << "'";
  for (const std::string& s : fail) EXPECT_FALSE(matches(gbnf, s)) << gbnf << "\n should refuse: '" << s << "'";
}

TEST(GrammarMatch, Literals) {
  expect_language("root ::= \"abc\"", {"abc"}, {"", "ab", "abcd", "abd", "ABC"});
  expect_language("root ::= \"\"", {""}, {"a"});
  expect_language("root ::= \"a\" | \"bc\" | \"\"", {"a", "bc", ""}, {"b", "abc", "bca"});
}

TEST(GrammarMatch, Repetitions) {
  expect_language("root ::= \"a\"{2,4}", {"aa", "aaa", "aaaa"}, {"", "a", "aaaaa"});
  expect_language("root ::= \"a\"{3}", {"aaa"}, {"aa", "aaaa"});
  expect_language("root ::= \"a\"{2,}", {"aa", "aaaaaaaa"}, {"a"});
  expect_language("root ::= \"a\"{0,2} \"b\"", {"b", "ab", "aab"}, {"aaab", "a"});
  expect_language("root ::= [ab]+ \"!\"?", {"a", "abba", "b!"}, {"", "!", "a!!", "c"});
  expect_language("root ::= (\"ab\" | \"c\"){2}", {"abab", "abc", "cab", "cc"}, {"ab", "abcab", "ac"});
  expect_language("root ::= x* \"z\"\nx ::= \"x\" | \"yy\"", {"z", "xz", "yyxz", "xxyyz"}, {"yz", "x", "zz"});
}

TEST(GrammarMatch, CharacterClassesAndAny) {
  expect_language("root ::= [a-c0-2_]*", {"", "a0_", "cc21"}, {"d", "3", "A"});
  expect_language("root ::= [^abc]+", {"x", "dé中", "\n"}, {"", "a", "xa"});
  expect_language("root ::= . .", {"ab", "é中", "😀x"}, {"a", "abc"});
  expect_language("root ::= [一-鿿]+", {"中文", "一"}, {"a", "中a", "é"});
  expect_language("root ::= \"\\x41\\u00e9\\U0001F600\"", {"Aé😀"}, {"A", "Ae😀"});
  expect_language("root ::= [\\-\\]]+", {"-", "]-]"}, {"[", "\\"});
}

TEST(GrammarMatch, NestedRulesAndRecursion) {
  const std::string parens = "root ::= \"(\" root \")\" | \"\"";
  expect_language(parens, {"", "()", "((()))"}, {"(", "())", ")("});
  const std::string list = "root ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= [0-9]+ | root";
  expect_language(list, {"[]", "[1]", "[12,3]", "[[],[4,[5]]]"}, {"[", "[,]", "[1,]", "[1]]", "[a]"});
}

TEST(GrammarMatch, JsonGrammar) {
  // llama.cpp's grammars/json.gbnf, reduced to its structure.
  const std::string json = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";
  expect_language(json,
                  {"{}", "{\"a\":1}", "{\"a\": [1, 2.5, -3e4, \"x\\n\\u00e9\"], \"b\": {\"c\": null}}", "{ \"é\":true}"},
                  {"", "{", "[]", "{\"a\"}", "{\"a\":01}", "{\"a\":\"\n\"}", "{\"a\":1,}", "{'a':1}"});
}

TEST(GrammarTokens, PartialUtf8AcrossTokens) {
  // "é" is C3 A9: the first byte alone is allowed only where a char it can start is.
  auto trie = TokenTrie::build({"\xC3", "\xA9", "a", "\xC3\xA9", "\xE4"});
  auto c = constraint("root ::= \"é\" \"a\"", trie);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->allowed_tokens(), (std::vector<uint8_t>{1, 0, 0, 1, 0}));
  ASSERT_TRUE(c->accept(0).is_ok());
  EXPECT_FALSE(c->can_end());
  EXPECT_EQ(c->allowed_tokens(), (std::vector<uint8_t>{0, 1, 0, 0, 0}));
  ASSERT_TRUE(c->accept(1).is_ok());
  EXPECT_EQ(c->allowed_tokens(), (std::vector<uint8_t>{0, 0, 1, 0, 0}));
  EXPECT_FALSE(c->accept(0).is_ok());  // refused, state unchanged
  ASSERT_TRUE(c->accept(2).is_ok());
  EXPECT_TRUE(c->can_end());
  // [^é]: a lead byte C3 can still become another char (è); E4 can too (中).
  auto d = constraint("root ::= [^é]", trie);
  EXPECT_EQ(d->allowed_tokens(), (std::vector<uint8_t>{1, 0, 1, 0, 1}));
  // [a-z]: no multi-byte char qualifies, so no lead byte does.
  auto e = constraint("root ::= [a-z]", trie);
  EXPECT_EQ(e->allowed_tokens(), (std::vector<uint8_t>{0, 0, 1, 0, 0}));
}

TEST(GrammarTokens, EndOfGenerationAndControlTokens) {
  // 0 "a", 1 "b", 2 "</s>" (eog), 3 "<|tool|>" (control), 4 "" (empty piece)
  const std::vector<int32_t> control = {2, 3};
  auto trie = TokenTrie::build({"a", "b", "</s>", "<|tool|>", ""}, control);
  auto c = constraint("root ::= \"a\"+", trie, {2});
  EXPECT_EQ(c->allowed_tokens(), (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  EXPECT_FALSE(c->accept(2).is_ok());
  ASSERT_TRUE(c->accept(0).is_ok());
  EXPECT_EQ(c->allowed_tokens(), (std::vector<uint8_t>{1, 0, 1, 0, 0}));
  EXPECT_TRUE(c->accept(2).is_ok());
  c->reset();
  EXPECT_FALSE(c->can_end());
  EXPECT_FALSE(c->accept(7).is_ok());   // outside the vocabulary
  EXPECT_FALSE(c->accept(-1).is_ok());
  // A control token only through a token reference; its text never matches chars.
  auto t = constraint("root ::= <|tool|> \"b\" | \"<|tool|>\"", trie, {2});
  EXPECT_EQ(t->allowed_tokens(), (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  ASSERT_TRUE(t->accept(3).is_ok());
  EXPECT_EQ(t->allowed_tokens(), (std::vector<uint8_t>{0, 1, 0, 0, 0}));
  // !<[0]>: any one token but 0 (not the end of generation, not an empty piece).
  auto n = constraint("root ::= !<[0]> \"a\"", trie, {2});
  EXPECT_EQ(n->allowed_tokens(), (std::vector<uint8_t>{0, 1, 0, 1, 0}));
  // The end-of-generation token named by <[2]> is allowed there, before the grammar can end (llama.cpp
  // never allows it early); mask, is_allowed and accept agree (grammar_fuzz found the mask allowing
  // it while its check expected can_end() alone).
  auto named = constraint("root ::= <[2]> \"a\"", trie, {2});
  EXPECT_FALSE(named->can_end());
  EXPECT_EQ(named->allowed_tokens(), (std::vector<uint8_t>{0, 0, 1, 0, 0}));
  EXPECT_TRUE(named->is_allowed(2));
  ASSERT_TRUE(named->accept(2).is_ok());
  EXPECT_EQ(named->allowed_tokens(), (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  auto bad = make_grammar_constraint("root ::= <[9]>", trie, {});
  EXPECT_FALSE(bad.ok());
}

// Nested repetitions multiply the parse stacks with every character: "." followed by 80 "+" (from
// a fuzzed grammar) took minutes per step. Past GrammarStacks::kMaxStacks the step is refused and
// the constraint says why; the same language written plainly still works.
TEST(GrammarTokens, ExponentiallyAmbiguousGrammarIsRefusedNotSlow) {
  auto vocab = byte_vocab();
  auto c = constraint("root ::= \"a\" . " + std::string(80, '+'), vocab);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->why_nothing_allowed().empty());
  ASSERT_TRUE(c->accept('a').is_ok());
  bool refused = false;
  for (int i = 0; i < 64 && !refused; ++i) {
    const std::vector<uint8_t>& mask = c->allowed_tokens();
    if (!mask['x']) {
      refused = true;
      break;
    }
    ASSERT_TRUE(c->accept('x').is_ok());
  }
  ASSERT_TRUE(refused) << "64 characters of a grammar with 80 nested repetitions: the stacks stayed under the budget";
  EXPECT_NE(c->why_nothing_allowed().find("too ambiguous"), std::string::npos) << c->why_nothing_allowed();
  EXPECT_TRUE(matches("root ::= \"a\" .+", "a" + std::string(64, 'x')));
}

TEST(GrammarTokens, ApplySetsMinusInfinityOnShortAndFullCandidateLists) {
  auto trie = TokenTrie::build({"a", "b", "ab", "ba"});
  auto made = make_grammar_constraint("root ::= \"ab\"", trie, {});
  ASSERT_TRUE(made.ok()) << made.status().message();
  TokenConstraint& c = **made;
  std::vector<TokenCandidate> cands = {{0, 1.0f, 0}, {1, 2.0f, 0}, {2, 3.0f, 0}, {3, 4.0f, 0}, {9, 5.0f, 0}};
  c.apply(cands);
  EXPECT_EQ(cands[0].logit, 1.0f);
  EXPECT_TRUE(std::isinf(cands[1].logit) && cands[1].logit < 0);
  EXPECT_EQ(cands[2].logit, 3.0f);
  EXPECT_TRUE(std::isinf(cands[3].logit));
  EXPECT_TRUE(std::isinf(cands[4].logit));
  ASSERT_TRUE(c.accept(0).is_ok());
  std::vector<TokenCandidate> big(300);
  for (int i = 0; i < 300; ++i) big[i] = {i % 4, 0.0f, 0};
  c.apply(big);  // the full-mask path
  for (int i = 0; i < 300; ++i) EXPECT_EQ(std::isinf(big[i].logit), i % 4 != 1) << i;
}

// Random grammars over a small alphabet with multi-byte chars, random vocabularies whose pieces
// split those chars: the trie-walk mask must equal the reference's answer token by token.
std::string random_grammar(std::mt19937& rng, int n_vocab) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const char* atoms[] = {"\"a\"", "\"b\"", "\"ab\"", "\"é\"", "\"中\"", "[a-c]", "[^a]", "[é-ë]", ".", "[^ab中]", "\"\""};
  const char* postfix[] = {"", "", "", "*", "+", "?", "{1,2}", "{2}"};
  std::string out;
  for (int r = 0; r < 4; ++r) {
    out += "r" + std::to_string(r) + " ::= ";
    const int n_alt = 1 + pick(3);
    for (int a = 0; a < n_alt; ++a) {
      if (a > 0) out += " | ";
      const int n_items = pick(4);
      for (int i = 0; i < n_items; ++i) {
        const int kind = pick(10);
        if (kind < 6) {
          out += atoms[pick(11)];
        } else if (kind < 8 && r < 3) {  // references go to later rules: no left recursion
          out += "r" + std::to_string(r + 1 + pick(3 - r));
        } else if (kind < 9) {  // recursion, guarded by a terminal
          out += std::string("(") + atoms[pick(11)] + " | \"(\" r0 \")\")";
        } else {
          out += (pick(2) ? "<[" : "!<[") + std::to_string(pick(n_vocab - 1)) + "]>";
        }
        out += postfix[pick(8)];
        out += " ";
      }
    }
    out += "\n";
  }
  return out + "root ::= r0\n";
}

std::vector<std::string> random_pieces(std::mt19937& rng, int n) {
  const char* parts[] = {"a", "b", "c", "é", "中", "\xC3", "\xA9", "\xE4", "\xB8", "\xAD", "x", "ë"};
  std::set<std::string> seen;
  std::vector<std::string> pieces;
  while (static_cast<int>(pieces.size()) < n) {
    std::string p;
    const int len = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < len; ++i) p += parts[rng() % 12];
    if (seen.insert(p).second) pieces.push_back(p);
  }
  return pieces;
}

TEST(GrammarTokens, MaskEqualsReferenceOnRandomGrammars) {
  std::mt19937 rng(1234);
  int n_checked = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const int n_text = 40;
    std::vector<std::string> pieces = random_pieces(rng, n_text);
    pieces.push_back("<ctl>");  // id n_text: control
    pieces.push_back("</s>");   // id n_text + 1: end of generation
    const std::vector<int32_t> control = {n_text, n_text + 1}, eog = {n_text + 1};
    auto trie = TokenTrie::build(pieces, control);
    const std::string text = random_grammar(rng, n_text + 1);
    Result<Grammar> g = parse_grammar(text);
    if (!g.ok()) continue;  // left recursion or an empty language: the parser's tests cover those
    test::ReferenceMatcher ref(*g);
    auto made = GrammarConstraint::create(*g, trie, eog);
    ASSERT_TRUE(made.ok()) << made.status().message();
    GrammarConstraint& c = **made;
    for (int step = 0; step < 12; ++step) {
      const std::vector<uint8_t> mask = c.allowed_tokens();
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < static_cast<int32_t>(pieces.size()); ++id) {
        bool want;
        if (id == n_text + 1) {
          want = ref.can_end();
        } else {
          test::ReferenceMatcher copy = ref;
          want = copy.accept_token(id, pieces[id], id != n_text);
        }
        ASSERT_EQ(mask[id] != 0, want) << "token " << id << " '" << pieces[id] << "' step " << step << "\n" << random_grammar(rng, 0);
        EXPECT_EQ(c.is_allowed(id), want);
        if (want) allowed.push_back(id);
      }
      EXPECT_EQ(c.can_end(), ref.can_end());
      ++n_checked;
      if (allowed.empty() || ref.n_stacks() > 200) break;  // the reference is quadratic in stacks
      const int32_t id = allowed[rng() % allowed.size()];
      if (id == n_text + 1) break;
      ASSERT_TRUE(c.accept(id).is_ok());
      ASSERT_TRUE(ref.accept_token(id, pieces[id], id != n_text));
    }
  }
  EXPECT_GT(n_checked, 1000);
}

}  // namespace
}  // namespace ox
