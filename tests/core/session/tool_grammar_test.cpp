// Tool-call grammars: for every format with JSON arguments, the grammar of tool_choice required
// accepts well-formed calls in that family's syntax (which also parse back into the calls) and
// rejects arguments that break the tool's schema; named choice, single calls, token markers.
// (The named-parameter formats: tool_grammar_named_test.cpp.)
#include "core/session/tool_grammar.h"

#include <gtest/gtest.h>

#include "core/chat/json_scan.h"
#include "core/chat/tool_parse.h"
#include "core/sampler/grammar_parser.h"
#include "tests/core/session/tool_grammar_match.h"

namespace ox {
namespace {

using chat::ChatFormat;
using chat::ToolChoice;

const nlohmann::json& grammar_tools() {
  static const nlohmann::json kTools = nlohmann::json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["location"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
      "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}}])");
  return kTools;
}

bool accepts(const std::string& gbnf, const std::string& text) { return test::grammar_matches(gbnf, text); }

struct Shape {
  ChatFormat format;
  // A call text with ARGS where the arguments go (get_weather), and the parallel form (ARGS, then
  // get_time's {"tz": "CET"}).
  std::string single;
  std::string parallel;
};

std::string with_args(std::string s, const std::string& args) {
  for (size_t p = s.find("ARGS"); p != std::string::npos; p = s.find("ARGS", p + args.size())) s.replace(p, 4, args);
  return s;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> kShapes = {
      {ChatFormat::kHermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
       "\"arguments\": {\"tz\": \"CET\"}}\n</tool_call>"},
      {ChatFormat::kLlama3, "{\"name\": \"get_weather\", \"parameters\": ARGS}",
       "{\"name\": \"get_weather\", \"parameters\": ARGS}; {\"name\": \"get_time\", \"parameters\": {\"tz\": \"CET\"}}"},
      {ChatFormat::kMistralNemo, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": ARGS, \"id\": \"abc123XYZ\"}]",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": ARGS, \"id\": \"abc123XYZ\"}, {\"name\": \"get_time\", "
       "\"arguments\": {\"tz\": \"CET\"}, \"id\": \"a1b2c3d4e\"}]"},
      {ChatFormat::kGranite, "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": ARGS}]",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": ARGS}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}]"},
      {ChatFormat::kGeneric, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": ARGS}]}",
       "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": ARGS}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}]}"},
      {ChatFormat::kCommandR, "Action: ```json\n[{\"tool_name\": \"get_weather\", \"parameters\": ARGS}]\n```",
       "<|START_ACTION|>[{\"tool_name\": \"get_weather\", \"parameters\": ARGS}, {\"tool_name\": \"get_time\", \"parameters\": "
       "{\"tz\": \"CET\"}}]<|END_ACTION|>"},
      {ChatFormat::kGptOss, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>ARGS",
       ""},  // harmony stops at each call's <|call|>: one call per reply
      {ChatFormat::kFunctionaryV32, "get_weather\nARGS", "get_weather\nARGS>>>get_time\n{\"tz\": \"CET\"}"},
      {ChatFormat::kDeepSeekR1,
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\nARGS\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\nARGS\n```<｜tool▁call▁end｜>\n"
       "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"tz\": \"CET\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
      {ChatFormat::kKimiK2,
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>ARGS<|tool_call_end|>"
       "<|tool_calls_section_end|>",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>ARGS<|tool_call_end|>"
       "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"tz\": \"CET\"}<|tool_call_end|><|tool_calls_section_end|>"},
  };
  return kShapes;
}

const char* kGood[] = {R"({"location": "Paris"})", R"({"location": "Paris", "unit": "c"})"};
const char* kBad[] = {R"({"unit": "c"})", R"({"location": 5})", R"({"location": "Paris", "unit": "kelvin"})", R"({"place": "Paris"})"};

TEST(ToolGrammar, RequiredAcceptsCallsAndRejectsSchemaViolations) {
  for (const Shape& s : shapes()) {
    const std::string name(chat::chat_format_name(s.format));
    Result<ToolGrammar> g = tool_call_grammar(s.format, grammar_tools(), {ToolChoice::Mode::kRequired, ""});
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    EXPECT_FALSE(g->lazy);
    for (const char* args : kGood) {
      for (const std::string& shape : {s.single, s.parallel}) {
        if (shape.empty()) continue;
        const std::string text = with_args(shape, args);
        EXPECT_TRUE(accepts(g->gbnf, text)) << name << " rejects\n" << text << "\n" << g->gbnf;
        // What the grammar lets through, the parser reads as calls.
        Result<chat::ParsedMessage> m = chat::parse_assistant_output(s.format, text, false);
        ASSERT_TRUE(m.ok());
        ASSERT_FALSE(m->tool_calls.empty()) << name << ": " << text;
        EXPECT_EQ(m->tool_calls[0].name, "get_weather") << name;
        EXPECT_EQ(m->tool_calls[0].arguments, chat::minify_json(args)) << name;
      }
    }
    for (const char* args : kBad) EXPECT_FALSE(accepts(g->gbnf, with_args(s.single, args))) << name << " accepts " << args;
    EXPECT_FALSE(accepts(g->gbnf, "Sure, let me check.")) << name;
  }
}

TEST(ToolGrammar, NamedAndSingle) {
  for (const Shape& s : shapes()) {
    const std::string name(chat::chat_format_name(s.format));
    Result<ToolGrammar> named = tool_call_grammar(s.format, grammar_tools(), {ToolChoice::Mode::kNamed, "get_time"});
    ASSERT_TRUE(named.ok()) << name;
    EXPECT_FALSE(accepts(named->gbnf, with_args(s.single, kGood[0]))) << name << ": only get_time";
    ToolGrammarOptions single;
    single.parallel_tool_calls = false;
    Result<ToolGrammar> one = tool_call_grammar(s.format, grammar_tools(), {ToolChoice::Mode::kRequired, ""}, single);
    ASSERT_TRUE(one.ok()) << name;
    EXPECT_TRUE(accepts(one->gbnf, with_args(s.single, kGood[0]))) << name;
    if (!s.parallel.empty()) {
      EXPECT_FALSE(accepts(one->gbnf, with_args(s.parallel, kGood[0]))) << name;
    }
  }
  EXPECT_FALSE(tool_call_grammar(ChatFormat::kHermes, grammar_tools(), {ToolChoice::Mode::kNamed, "nope"}).ok());
}

TEST(ToolGrammar, AutoIsLazyWithTriggers) {
  Result<ToolGrammar> g = tool_call_grammar(ChatFormat::kHermes, grammar_tools(), {});
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->lazy);
  ASSERT_EQ(g->triggers.size(), 1u);
  EXPECT_EQ(g->triggers[0].text, "<tool_call>");
  EXPECT_FALSE(g->triggers[0].at_start);
  Result<ToolGrammar> llama = tool_call_grammar(ChatFormat::kLlama3, grammar_tools(), {});
  ASSERT_TRUE(llama.ok());
  ASSERT_EQ(llama->triggers.size(), 1u);
  EXPECT_EQ(llama->triggers[0].text, "{\"");
  EXPECT_TRUE(llama->triggers[0].at_start);
}

TEST(ToolGrammar, Errors) {
  EXPECT_EQ(tool_call_grammar(ChatFormat::kContentOnly, grammar_tools(), {ToolChoice::Mode::kRequired, ""}).status().code(),
            ErrorCode::kUnsupported);
  EXPECT_FALSE(tool_call_grammar(ChatFormat::kHermes, grammar_tools(), {ToolChoice::Mode::kNone, ""}).ok());
  EXPECT_FALSE(tool_call_grammar(ChatFormat::kHermes, nlohmann::json::array(), {ToolChoice::Mode::kRequired, ""}).ok());
  const nlohmann::json bad_schema = nlohmann::json::parse(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "not": {}}}}])");
  Result<ToolGrammar> r = tool_call_grammar(ChatFormat::kHermes, bad_schema, {ToolChoice::Mode::kRequired, ""});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tools[0] (f) parameters"), std::string::npos) << r.status().message();
}

TEST(ToolGrammar, ControlTokenMarkers) {
  ToolGrammarOptions o;
  o.control_token_id = [](std::string_view m) -> std::optional<int32_t> {
    if (m == "[TOOL_CALLS]") return 5;
    return std::nullopt;
  };
  Result<ToolGrammar> g = tool_call_grammar(ChatFormat::kMistralNemo, grammar_tools(), {ToolChoice::Mode::kRequired, ""}, o);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->gbnf.rfind("root ::= <[5]> ", 0), 0u) << g->gbnf;
  EXPECT_TRUE(parse_grammar(g->gbnf).ok());
}

TEST(ToolGrammar, PrefixRules) {
  EXPECT_EQ(tool_grammar_detail::prefix_rules("root ::= a-b \"x y\" [a-z]{1,2} # c d\na-b ::= <|t|> root\n", "p-"),
            "p-root ::= p-a-b \"x y\" [a-z]{1,2} # c d\np-a-b ::= <|t|> p-root\n");
}

}  // namespace
}  // namespace ox
