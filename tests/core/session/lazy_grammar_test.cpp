// LazyGrammarConstraint on fixed token sequences: free text until a trigger, a trigger split over
// tokens or starting inside one, a control-token trigger, a marker in prose that is no call,
// start-only triggers, a grammar starting inside its trigger, and the tool-call grammars of
// tool_choice "auto" for Hermes and Functionary v3.2 (whose first call has no marker).
#include "core/session/lazy_grammar.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/session/tool_grammar.h"

namespace ox {
namespace {

// Ids 0..254: the bytes 1..255 one each; then multi-byte pieces; kControl: "<tool_call>" as a
// control token (kept out of text matching, as a real vocabulary's special marker).
struct Vocab {
  std::vector<std::string> pieces;
  int32_t control = -1;
  std::shared_ptr<const TokenTrie> trie;

  explicit Vocab(bool control_marker = false) {
    for (int c = 1; c < 256; ++c) pieces.push_back(std::string(1, static_cast<char>(c)));
    for (const char* p : {"<tool", "_call>", "Hi <tool", "_call>{", "<tool_call>oops", "{\"", "ab", ">>>get"}) pieces.emplace_back(p);
    std::vector<int32_t> controls;
    if (control_marker) {
      control = static_cast<int32_t>(pieces.size());
      pieces.emplace_back("<tool_call>");
      controls.push_back(control);
    }
    trie = TokenTrie::build(pieces, controls);
  }
  int32_t id(std::string_view piece) const {
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i] == piece && static_cast<int32_t>(i) != control) return static_cast<int32_t>(i);
    }
    ADD_FAILURE() << "no piece " << piece;
    return 0;
  }
};

const int32_t kOutside = 100000;  // not a token of the vocabulary

std::unique_ptr<LazyGrammarConstraint> make(const Vocab& v, std::string_view gbnf, std::vector<GrammarTrigger> triggers) {
  auto c = LazyGrammarConstraint::create(gbnf, std::move(triggers), v.trie, std::vector<int32_t>{});
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Whether the constraint lets `token` come next.
bool allows(LazyGrammarConstraint& c, int32_t token) {
  TokenCandidate one{token, 1.0f, 0.0f};
  c.apply(std::span<TokenCandidate>(&one, 1));
  return one.logit != -INFINITY;
}

void feed(LazyGrammarConstraint& c, const Vocab& v, std::initializer_list<std::string_view> pieces) {
  for (std::string_view p : pieces) ASSERT_TRUE(c.accept(v.id(p)).is_ok()) << p;
}

const char* kCall = R"(root ::= "<tool_call>" "{" [a-z]+ "}")";

TEST(LazyGrammar, FreeUntilATriggerSplitOverTokens) {
  Vocab v;
  auto c = make(v, kCall, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"H", "i", " ", "<tool"});
  EXPECT_FALSE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("x")));  // nothing constrained yet
  EXPECT_TRUE(c->can_end());
  feed(*c, v, {"_call>"});
  EXPECT_TRUE(c->triggered());
  EXPECT_FALSE(c->can_end());
  EXPECT_FALSE(allows(*c, v.id("x")));
  EXPECT_TRUE(allows(*c, v.id("{")));
  feed(*c, v, {"{", "ab"});
  EXPECT_FALSE(allows(*c, v.id("1")));
  EXPECT_FALSE(c->can_end());
  feed(*c, v, {"}"});
  EXPECT_TRUE(c->can_end());
  EXPECT_FALSE(c->accept(v.id("x")).is_ok());  // nothing may follow the call
}

TEST(LazyGrammar, TriggerStartingInsideAToken) {
  Vocab v;
  auto c = make(v, kCall, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"Hi <tool"});  // the text before the trigger in the same token is free
  EXPECT_FALSE(c->triggered());
  feed(*c, v, {"_call>{"});
  EXPECT_TRUE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("a")));
  EXPECT_FALSE(allows(*c, v.id("}")));  // [a-z]+ needs one letter first
}

TEST(LazyGrammar, MarkerInProseIsNoCallAndTheSearchGoesOn) {
  Vocab v;
  auto c = make(v, kCall, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"<tool_call>oops"});  // the grammar refuses "oops" after the marker
  EXPECT_FALSE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("x")));
  feed(*c, v, {" ", "<tool", "_call>"});
  EXPECT_TRUE(c->triggered());
  EXPECT_FALSE(allows(*c, v.id("x")));
}

TEST(LazyGrammar, ControlTokenTrigger) {
  Vocab v(/*control_marker=*/true);
  const std::string gbnf = "root ::= <[" + std::to_string(v.control) + "]> \"{\" [a-z]+ \"}\"";
  auto c = make(v, gbnf, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"o", "k", " "});
  ASSERT_TRUE(c->accept(v.control).is_ok());
  EXPECT_TRUE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("{")));
  EXPECT_FALSE(allows(*c, v.id("<")));

  // The marker typed as text is not the control token the grammar asks for: no call.
  c->reset();
  feed(*c, v, {"<tool", "_call>"});
  EXPECT_FALSE(c->triggered());
}

TEST(LazyGrammar, StartOnlyTrigger) {
  Vocab v;
  const char* json = R"(root ::= "{\"" [a-z]+ "\"}")";
  auto c = make(v, json, {{"{\"", /*at_start=*/true}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"x", " ", "{\""});  // JSON after prose: content
  EXPECT_FALSE(c->triggered());
  c->reset();
  feed(*c, v, {" ", "\n", "{\""});  // at the start after whitespace: a call
  EXPECT_TRUE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("a")));
  EXPECT_FALSE(allows(*c, v.id("{")));
}

TEST(LazyGrammar, ResetStartsFree) {
  Vocab v;
  auto c = make(v, kCall, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  feed(*c, v, {"<tool", "_call>"});
  ASSERT_TRUE(c->triggered());
  c->reset();
  EXPECT_FALSE(c->triggered());
  EXPECT_TRUE(allows(*c, v.id("x")));
  EXPECT_TRUE(c->can_end());
}

TEST(LazyGrammar, Errors) {
  Vocab v;
  EXPECT_FALSE(LazyGrammarConstraint::create("root ::= \"a", {{"x"}}, v.trie, std::vector<int32_t>{}).ok());
  EXPECT_FALSE(LazyGrammarConstraint::create(kCall, {{""}}, v.trie, std::vector<int32_t>{}).ok());
  EXPECT_FALSE(LazyGrammarConstraint::create(kCall, {{"x"}}, nullptr, std::vector<int32_t>{}).ok());
  EXPECT_FALSE(LazyGrammarConstraint::create(kCall, {{"ab", false, 2}}, v.trie, std::vector<int32_t>{}).ok());
  auto c = make(v, kCall, {{"<tool_call>"}});
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->accept(-1).is_ok());
  EXPECT_FALSE(c->accept(kOutside).is_ok());
}

// tool_choice "auto" in the Hermes format, byte by byte: prose is free, the call after
// <tool_call> must follow get_weather's schema.
TEST(LazyGrammar, HermesAutoToolCall) {
  const nlohmann::json tools = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}])");
  Result<ToolGrammar> g = tool_call_grammar(chat::ChatFormat::kHermes, tools, {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(g->lazy);
  Vocab v;
  auto c = make(v, g->gbnf, g->triggers);
  ASSERT_NE(c, nullptr);
  const std::string prose = "Let me check. ";
  for (char ch : prose) ASSERT_TRUE(c->accept(v.id(std::string(1, ch))).is_ok());
  EXPECT_FALSE(c->triggered());
  const std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>";
  size_t i = 0;
  for (; i < call.size(); ++i) {
    if (call.compare(i, 9, "\"location") == 0) break;
    ASSERT_TRUE(c->accept(v.id(std::string(1, call[i]))).is_ok()) << i;
  }
  EXPECT_TRUE(c->triggered());
  EXPECT_FALSE(allows(*c, v.id("}")));  // "location" is required
  EXPECT_FALSE(allows(*c, v.id("x")));
  for (; i < call.size(); ++i) ASSERT_TRUE(c->accept(v.id(std::string(1, call[i]))).is_ok()) << i;
  EXPECT_TRUE(c->can_end());
}

// Functionary v3.2 (the prompt ends with ">>>"): a reply that starts with a tool's name and a
// newline is a call, as is ">>>NAME\n" after text for the user ("all\n..."); the grammar starts at
// the name. Ordinary text, or a name without its newline, leaves the reply free.
struct FunctionaryAuto {
  Vocab v;
  std::unique_ptr<LazyGrammarConstraint> c;
  FunctionaryAuto() {
    const nlohmann::json tools = nlohmann::json::parse(R"([
      {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"location": {"type": "string"}}, "required": ["location"]}}},
      {"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {}}}}])");
    Result<ToolGrammar> g = tool_call_grammar(chat::ChatFormat::kFunctionaryV32, tools, {});
    EXPECT_TRUE(g.ok()) << g.status().message();
    if (!g.ok()) return;
    EXPECT_TRUE(g->lazy);
    c = make(v, g->gbnf, g->triggers);
  }
  bool allows_only_brace() { return allows(*c, v.id("{")) && !allows(*c, v.id("x")) && !allows(*c, v.id(">")); }
  void bytes(std::string_view text) {
    for (char ch : text) ASSERT_TRUE(c->accept(v.id(std::string(1, ch))).is_ok()) << text;
  }
  // Free through `before`, constrained from `head` on (only the arguments' "{" may come next),
  // then a whole call.
  void call_after(std::string_view before, std::string_view head) {
    bytes(before);
    EXPECT_FALSE(c->triggered()) << before;
    bytes(head);
    EXPECT_TRUE(c->triggered()) << before << head;
    EXPECT_TRUE(allows_only_brace());
    bytes("{\"location\": \"Paris\"}");
    EXPECT_TRUE(c->can_end());
  }
};

TEST(LazyGrammar, FunctionaryFirstCallHasNoMarker) {
  FunctionaryAuto f;
  ASSERT_NE(f.c, nullptr);
  f.call_after("get_weather", "\n");
  f.bytes(">>>get\n{}");  // a second call
  EXPECT_TRUE(f.c->can_end());

  f.c->reset();  // a shorter tool name, and leading whitespace
  f.bytes(" get\n");
  EXPECT_TRUE(f.c->triggered());
}

TEST(LazyGrammar, FunctionaryCallAfterText) {
  FunctionaryAuto f;
  ASSERT_NE(f.c, nullptr);
  f.call_after("all\nLet me check the weather.", ">>>get_weather\n");

  // The trigger starting inside one token (">>>get"): the grammar begins at "get".
  f.c->reset();
  f.bytes("all\nOne moment.");
  ASSERT_TRUE(f.c->accept(f.v.id(">>>get")).is_ok());
  EXPECT_FALSE(f.c->triggered());
  f.bytes("_weather\n");
  EXPECT_TRUE(f.c->triggered());
  EXPECT_TRUE(f.allows_only_brace());
}

TEST(LazyGrammar, FunctionaryOrdinaryTextStaysFree) {
  FunctionaryAuto f;
  ASSERT_NE(f.c, nullptr);
  for (const char* text : {"all\nget_weather is a tool I have.\nIt says: get_weather\nBye",
                           "get_weather sounds useful\n", "get_weatherly\nno", "all\n>>>all\n>>>get_weatherly\n"}) {
    f.c->reset();
    f.bytes(text);
    EXPECT_FALSE(f.c->triggered()) << text;
    EXPECT_TRUE(allows(*f.c, f.v.id("x"))) << text;
    EXPECT_TRUE(f.c->can_end()) << text;
  }
}

}  // namespace
}  // namespace ox
