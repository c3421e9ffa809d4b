// Tool-call grammars of the named-parameter formats (Qwen3-Coder, GLM 4.5, LFM2, Gemma 4): the
// grammar of tool_choice required accepts calls as the real chat templates of ../shared/templates
// render them (LFM2's as llama.cpp's python-style parser reads them), which parse back into the
// same arguments, and rejects wrong names, missing required parameters and wrong-typed values;
// then, on stories260K (which knows nothing of tool syntax), sampled replies over several seeds
// parse into calls whose arguments satisfy the schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/chat/template.h"
#include "core/chat/tool_parse.h"
#include "core/session/session.h"
#include "core/session/tool_grammar.h"
#include "core/session/tool_grammar_named.h"
#include "tests/core/session/tool_grammar_match.h"
#include "tests/support/shared_data.h"

namespace ox::named_args_test {
namespace {

using chat::ChatFormat;
using chat::ToolChoice;
using Json = nlohmann::ordered_json;

const Json& named_tools() {
  static const Json kTools = Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
      "location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]},
      "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["location"]}}},
    {"type": "function", "function": {"name": "set_alarm", "parameters": {"type": "object", "properties": {
      "hour": {"type": "integer", "minimum": 0, "maximum": 23}, "minute": {"type": "integer", "minimum": 0, "maximum": 59},
      "label": {"type": "string"}}, "required": ["hour", "minute"]}}}])");
  return kTools;
}

bool named_accepts(const std::string& gbnf, const std::string& text) { return test::grammar_matches(gbnf, text); }

std::string read_named_template(const std::string& name) {
  std::ifstream in(test::shared_path("templates/" + name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct NamedCall {
  std::string name;
  Json args;
};

// LFM2's calls as llama.cpp's python_style_tool_calls reads them (the LFM2.5 template renders no
// history): [NAME(key="text", n=1), ...] between its markers.
std::string render_lfm2(const std::vector<NamedCall>& calls) {
  std::string out = "<|tool_call_start|>[";
  for (size_t i = 0; i < calls.size(); ++i) {
    out += (i ? ", " : "") + calls[i].name + "(";
    size_t k = 0;
    for (const auto& [key, v] : calls[i].args.items()) out += (k++ ? ", " : "") + key + "=" + v.dump();
    out += ")";
  }
  return out + "]<|tool_call_end|>";
}

struct TemplatedFormat {
  ChatFormat format;
  const char* file;   // nullptr: LFM2 (render_lfm2)
  const char* begin;  // the calls run from the first `begin` to the end of the last `end`
  const char* end;
};

const TemplatedFormat kNamedFormats[] = {
    {ChatFormat::kQwen3Coder, "Qwen3-Coder.jinja", "<tool_call>", "</tool_call>"},
    {ChatFormat::kGlm45, "GLM-4.6.jinja", "<tool_call>", "</tool_call>"},
    {ChatFormat::kGemma4, "google-gemma-4-31B-it.jinja", "<|tool_call>", "<tool_call|>"},
    {ChatFormat::kLfm2, nullptr, "", ""},
};

// The calls as the format's template writes a previous assistant turn holding them.
std::string render_calls(const TemplatedFormat& f, const std::vector<NamedCall>& calls) {
  if (f.file == nullptr) return render_lfm2(calls);
  Json tool_calls = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    tool_calls.push_back({{"id", "call" + std::to_string(i)},
                          {"type", "function"},
                          {"function", {{"name", calls[i].name}, {"arguments", calls[i].args.dump()}}}});
  }
  const Json msgs = Json::array({{{"role", "user"}, {"content", "USER-TURN"}},
                                 {{"role", "assistant"}, {"content", ""}, {"tool_calls", tool_calls}},
                                 {{"role", "user"}, {"content", "Thanks"}}});
  Result<Json> prepared = chat::prepare_tool_messages(f.format, msgs);
  Result<Json> extra = chat::tool_template_context(f.format, named_tools());
  EXPECT_TRUE(prepared.ok() && extra.ok());
  if (!prepared.ok() || !extra.ok()) return "";
  chat::RenderOptions o;
  o.now = chat::DateTime{2026, 1, 15, 12, 0, 0};
  Result<std::string> out =
      chat::apply_chat_template_ordered(read_named_template(f.file), *prepared, false, "<s>", "</s>", *extra, o);
  EXPECT_TRUE(out.ok()) << f.file << ": " << out.status().message();
  if (!out.ok()) return "";
  const size_t b = out->find(f.begin, out->find("USER-TURN"));  // (system prompts show examples)
  const size_t e = out->rfind(f.end);
  EXPECT_TRUE(b != std::string::npos && e != std::string::npos && b < e) << *out;
  if (b == std::string::npos || e == std::string::npos || b >= e) return "";
  return out->substr(b, e + std::string_view(f.end).size() - b);
}

const std::vector<std::vector<NamedCall>>& valid_calls() {
  static const std::vector<std::vector<NamedCall>> kValid = {
      {{"get_weather", Json::parse(R"({"location": "Paris"})")}},
      {{"get_weather", Json::parse(R"({"location": "New York, NY\nUSA", "unit": "f", "days": 3})")}},
      {{"set_alarm", Json::parse(R"({"minute": 30, "hour": 7, "label": "wake <up> now"})")}},  // required ones reversed
      {{"set_alarm", Json::parse(R"({"hour": 23, "minute": 0})")}},
  };
  return kValid;
}

const std::vector<NamedCall>& invalid_calls() {
  static const std::vector<NamedCall> kInvalid = {
      {"get_wether", Json::parse(R"({"location": "Paris"})")},               // no such tool
      {"get_weather", Json::parse(R"({"unit": "c"})")},                      // location missing
      {"set_alarm", Json::parse(R"({"hour": 7})")},                          // minute missing
      {"get_weather", Json::parse(R"({"location": "Paris", "days": "three"})")},  // not an integer
      {"get_weather", Json::parse(R"({"location": "Paris", "days": 15})")},       // past the maximum
      {"set_alarm", Json::parse(R"({"hour": 24, "minute": 0})")},
      {"get_weather", Json::parse(R"({"location": "Paris", "unit": "kelvin"})")},  // not in the enum
      {"get_weather", Json::parse(R"({"location": "Paris", "place": "x"})")},      // no such parameter
  };
  return kInvalid;
}

chat::ParseOptions parse_with(const nlohmann::json* tools) {
  chat::ParseOptions o;
  o.tools = tools;
  return o;
}

TEST(ToolGrammarNamed, AcceptsRenderedCallsAndRejectsBadOnes) {
  const nlohmann::json plain_tools = named_tools();
  for (const TemplatedFormat& f : kNamedFormats) {
    const std::string fmt(chat::chat_format_name(f.format));
    if (f.file != nullptr && !test::file_exists(test::shared_path(std::string("templates/") + f.file))) {
      GTEST_SKIP() << "no " << f.file;
    }
    Result<ToolGrammar> g = tool_call_grammar(f.format, named_tools(), {ToolChoice::Mode::kRequired, ""});
    ASSERT_TRUE(g.ok()) << fmt << ": " << g.status().message();
    ToolGrammarOptions single;
    single.parallel_tool_calls = false;
    Result<ToolGrammar> one = tool_call_grammar(f.format, named_tools(), {ToolChoice::Mode::kRequired, ""}, single);
    ASSERT_TRUE(one.ok());
    std::vector<std::vector<NamedCall>> cases = valid_calls();
    cases.push_back({valid_calls()[0][0], valid_calls()[2][0]});  // parallel
    for (const std::vector<NamedCall>& calls : cases) {
      const std::string text = render_calls(f, calls);
      EXPECT_TRUE(named_accepts(g->gbnf, text)) << fmt << " rejects\n" << text << "\n" << g->gbnf;
      EXPECT_EQ(named_accepts(one->gbnf, text), calls.size() == 1) << fmt << ": single call\n" << text;
      Result<chat::ParsedMessage> m = chat::parse_assistant_output(f.format, text, false, parse_with(&plain_tools));
      ASSERT_TRUE(m.ok());
      ASSERT_EQ(m->tool_calls.size(), calls.size()) << fmt << ": " << text;
      for (size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(m->tool_calls[i].name, calls[i].name);
        EXPECT_EQ(nlohmann::json::parse(m->tool_calls[i].arguments), nlohmann::json(calls[i].args)) << fmt << ": " << text;
      }
    }
    for (const NamedCall& bad : invalid_calls()) {
      const std::string text = render_calls(f, {bad});
      EXPECT_FALSE(named_accepts(g->gbnf, text)) << fmt << " accepts\n" << text;
    }
    EXPECT_FALSE(named_accepts(g->gbnf, "Sure, let me check.")) << fmt;
    Result<ToolGrammar> named = tool_call_grammar(f.format, named_tools(), {ToolChoice::Mode::kNamed, "set_alarm"});
    ASSERT_TRUE(named.ok());
    EXPECT_FALSE(named_accepts(named->gbnf, render_calls(f, valid_calls()[0]))) << fmt << ": only set_alarm";
    EXPECT_TRUE(named_accepts(named->gbnf, render_calls(f, valid_calls()[2]))) << fmt;
  }
}

TEST(ToolGrammarNamed, ExactQwen3CoderAndGlmShapes) {
  // The shapes llama.cpp's qwen3-coder.cpp and the GLM template write, by hand.
  Result<ToolGrammar> q = tool_call_grammar(ChatFormat::kQwen3Coder, named_tools(), {ToolChoice::Mode::kRequired, ""});
  ASSERT_TRUE(q.ok());
  const std::string qwen =
      "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
      "</function>\n</tool_call>";
  EXPECT_TRUE(named_accepts(q->gbnf, qwen));
  EXPECT_TRUE(named_accepts(q->gbnf, qwen + "\n" + qwen));
  std::string repeated = qwen;
  repeated.insert(repeated.find("</function>"), "<parameter=days>\n4\n</parameter>\n");
  EXPECT_FALSE(named_accepts(q->gbnf, repeated)) << "a parameter twice";
  std::string closing_inside = qwen;
  closing_inside.replace(closing_inside.find("Paris"), 5, "Pa</parameter>ris");
  EXPECT_FALSE(named_accepts(q->gbnf, closing_inside)) << "the closing tag inside a raw value";

  Result<ToolGrammar> glm = tool_call_grammar(ChatFormat::kGlm45, named_tools(), {ToolChoice::Mode::kRequired, ""});
  ASSERT_TRUE(glm.ok());
  EXPECT_TRUE(named_accepts(glm->gbnf,
                            "<tool_call>set_alarm\n<arg_key>hour</arg_key>\n<arg_value>7</arg_value>\n<arg_key>minute</arg_key>\n"
                            "<arg_value>5</arg_value>\n</tool_call>"));
  EXPECT_FALSE(named_accepts(glm->gbnf, "<tool_call>set_alarm\n<arg_key>hour</arg_key>\n<arg_value>7</arg_value>\n</tool_call>"));
}

// Past kMaxPermuted parameters the schema's order holds (a rule per set would be 2^n rules).
TEST(ToolGrammarNamed, ManyParametersInTheSchemaOrder) {
  Json props = Json::object();
  for (const char* k : {"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}) props[k] = {{"type", "integer"}};
  const Json tools = Json::array({{{"type", "function"},
                                   {"function", {{"name", "f"}, {"parameters", {{"type", "object"}, {"properties", props},
                                                                                {"required", {"k2", "k5"}}}}}}}});
  Result<ToolGrammar> g = tool_call_grammar(ChatFormat::kLfm2, tools, {ToolChoice::Mode::kRequired, ""});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto call = [](const std::string& args) { return "<|tool_call_start|>[f(" + args + ")]<|tool_call_end|>"; };
  EXPECT_TRUE(named_accepts(g->gbnf, call("k2=1, k5=2")));
  EXPECT_TRUE(named_accepts(g->gbnf, call("k1=0, k2=1, k3=1, k4=1, k5=2, k6=1, k7=1, k8=1")));
  EXPECT_TRUE(named_accepts(g->gbnf, call("k2=1, k5=2, k8=3")));
  EXPECT_FALSE(named_accepts(g->gbnf, call("k5=2, k2=1"))) << "out of order";
  EXPECT_FALSE(named_accepts(g->gbnf, call("k2=1, k8=3"))) << "k5 missing";
  EXPECT_FALSE(named_accepts(g->gbnf, call("k1=0")));
  EXPECT_FALSE(named_accepts(g->gbnf, call("k2=1, k2=1, k5=2"))) << "twice";
  EXPECT_FALSE(named_accepts(g->gbnf, call("")));
}

// A long raw value (the text automaton is a tail call: no stack grows with the value).
TEST(ToolGrammarNamed, LongRawValue) {
  Result<ToolGrammar> g = tool_call_grammar(ChatFormat::kGlm45, named_tools(), {ToolChoice::Mode::kRequired, ""});
  ASSERT_TRUE(g.ok());
  std::string value;
  for (int i = 0; i < 2000; ++i) value += "line <" + std::to_string(i) + "> </arg_valu\n";
  const std::string text = "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>" + value + "</arg_value>\n</tool_call>";
  EXPECT_TRUE(named_accepts(g->gbnf, text));
  std::string closed_early = text;
  closed_early.insert(closed_early.size() / 2, "</arg_value>");
  EXPECT_FALSE(named_accepts(g->gbnf, closed_early));
}

TEST(ToolGrammarNamed, LazyTriggersAndErrors) {
  const std::pair<ChatFormat, const char*> triggers[] = {{ChatFormat::kQwen3Coder, "<tool_call>"},
                                                         {ChatFormat::kGlm45, "<tool_call>"},
                                                         {ChatFormat::kLfm2, "<|tool_call_start|>"},
                                                         {ChatFormat::kGemma4, "<|tool_call>"}};
  for (const auto& [format, trigger] : triggers) {
    Result<ToolGrammar> g = tool_call_grammar(format, named_tools(), {});
    ASSERT_TRUE(g.ok());
    EXPECT_TRUE(g->lazy);
    ASSERT_EQ(g->triggers.size(), 1u);
    EXPECT_EQ(g->triggers[0].text, trigger);
  }
  const std::pair<const char*, const char*> bad[] = {
      {R"({"type": "array"})", "expected type \"object\""},
      {R"({"type": "object", "anyOf": []})", "'anyOf' is not supported"},
      {R"({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]})", "\"b\" is not in properties"},
      {R"({"type": "object", "properties": {"a>b": {"type": "string"}}})", "parameter name 'a>b'"},
      {R"({"type": "object", "properties": {"n": {"type": "integer", "not": {}}}})", "properties.n"},
  };
  for (const auto& [params, message] : bad) {
    const Json tools = Json::array(
        {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", Json::parse(params)}}}}});
    Result<ToolGrammar> g = tool_call_grammar(ChatFormat::kQwen3Coder, tools, {ToolChoice::Mode::kRequired, ""});
    ASSERT_FALSE(g.ok()) << params;
    EXPECT_NE(g.status().message().find(message), std::string::npos) << g.status().message();
  }
}

TEST(ToolGrammarNamed, TextWithout) {
  std::string rules;
  const std::string start = tool_grammar_detail::text_without("x", "abab", &rules);
  const std::string gbnf = "root ::= " + start + " \"abab\"\n" + rules;
  EXPECT_TRUE(named_accepts(gbnf, "abab"));
  EXPECT_TRUE(named_accepts(gbnf, "aabaabb" "abab"));
  EXPECT_TRUE(named_accepts(gbnf, "abaabab"));  // "aba" then the stop text
  EXPECT_FALSE(named_accepts(gbnf, "xxababyyabab"));
  EXPECT_FALSE(named_accepts(gbnf, "abababab"));  // the first "abab" ends it; what follows is extra
}

// ---- sampled on stories260K: only the grammar makes these replies calls ----

// A checker for the schemas used here (type, enum, minimum, maximum, properties, required,
// additionalProperties as false), written apart from the grammar code.
bool satisfies(const nlohmann::json& v, const nlohmann::json& s, std::string* why) {
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
    return *why = v.dump() + " not in enum", false;
  }
  const std::string type = s.value("type", "");
  if (type == "integer" && !v.is_number_integer()) return *why = v.dump() + " not an integer", false;
  if (type == "boolean" && !v.is_boolean()) return *why = v.dump() + " not a boolean", false;
  if (type == "string" && !v.is_string()) return *why = v.dump() + " not a string", false;
  if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) return *why = "below minimum", false;
  if (s.contains("maximum") && v.is_number() && v.get<double>() > s["maximum"].get<double>()) return *why = "above maximum", false;
  if (type == "object") {
    if (!v.is_object()) return *why = "not an object", false;
    for (const auto& r : s["required"]) {
      if (!v.contains(r.get<std::string>())) return *why = "missing " + r.get<std::string>(), false;
    }
    for (const auto& [k, x] : v.items()) {
      if (!s["properties"].contains(k)) return *why = "unknown " + k, false;
      if (!satisfies(x, s["properties"][k], why)) return false;
    }
  }
  return true;
}

TEST(ToolGrammarNamed, SampledRepliesParseIntoValidCalls) {
  auto model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  // Values the grammar bounds (a raw string ends only where the model writes the closing tag,
  // which stories260K has no reason to).
  const Json tools = Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer", "minimum": 1, "maximum": 14},
      "hourly": {"type": "boolean"}}, "required": ["unit", "days"]}}},
    {"type": "function", "function": {"name": "set_alarm", "parameters": {"type": "object", "properties": {
      "hour": {"type": "integer", "minimum": 0, "maximum": 23}, "minute": {"type": "integer", "minimum": 0, "maximum": 59}},
      "required": ["hour", "minute"]}}}])");
  const nlohmann::json plain_tools = tools;
  SessionOptions so;
  so.n_ctx = 512;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  ASSERT_TRUE(session.ok());
  auto prompt = (*model)->tokenizer().encode("Once upon a time", true, false);
  ASSERT_TRUE(prompt.ok());
  for (const TemplatedFormat& f : kNamedFormats) {
    const std::string fmt(chat::chat_format_name(f.format));
    ToolGrammarOptions single;
    single.parallel_tool_calls = false;
    Result<ToolGrammar> g = tool_call_grammar(f.format, tools, {ToolChoice::Mode::kRequired, ""}, single);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      auto constraint = (*model)->grammar_constraint(g->gbnf);
      ASSERT_TRUE(constraint.ok()) << constraint.status().message();
      GenerateOptions o;
      o.max_tokens = 400;
      o.sampling.seed = seed;
      o.sampling.temperature = 1.0f;
      o.constraint = *constraint;
      auto on_event = [](const GenerateEvent&) { return true; };
      auto stats = (*session)->generate(*prompt, o, on_event);
      ASSERT_TRUE(stats.ok()) << stats.status().message();
      SCOPED_TRACE(fmt + " seed " + std::to_string(seed) + ":\n" + stats->text);
      EXPECT_EQ(stats->finish_reason, "stop");
      Result<chat::ParsedMessage> m = chat::parse_assistant_output(f.format, stats->text, false, parse_with(&plain_tools));
      ASSERT_TRUE(m.ok());
      ASSERT_EQ(m->tool_calls.size(), 1u);
      const chat::ToolCall& call = m->tool_calls[0];
      const nlohmann::json* schema = nullptr;
      for (const auto& t : plain_tools) {
        if (t["function"]["name"] == call.name) schema = &t["function"]["parameters"];
      }
      ASSERT_NE(schema, nullptr) << call.name;
      const nlohmann::json args = nlohmann::json::parse(call.arguments, nullptr, false);
      std::string why;
      EXPECT_TRUE(satisfies(args, *schema, &why)) << call.arguments << ": " << why;
    }
  }
}

}  // namespace
}  // namespace ox::named_args_test
