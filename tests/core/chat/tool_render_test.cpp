// Tools through the real chat templates of ../shared/templates: each template's format is detected
// from its source, and a conversation with tools, a previous assistant tool call and its result
// renders with that family's markers. The rendered tool call, parsed back, gives the call again.
#include "core/chat/tool_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/chat/template.h"
#include "core/chat/tool_parse.h"
#include "tests/core/chat/render_helpers.h"
#include "tests/support/shared_data.h"

namespace ox::chat {
namespace {

std::string read_template(const std::string& name) {
  std::ifstream in(ox::test::shared_path("templates/" + name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kTools = R"([{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
  "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "City name"},
  "unit": {"type": "string", "enum": ["c", "f"], "description": "Temperature unit"}}, "required": ["location"]}}}])";

struct TemplateCase {
  const char* file;
  ChatFormat format;
  // Texts the render must hold: the tool's description, the previous call in the family's
  // syntax, the tool result.
  std::vector<std::string> markers;
  // Where the previous call starts in the render and where it ends (exclusive): parsed back with
  // the format's parser, it must give get_weather({"location":"Paris"}). Empty: not checked.
  std::string call_begin;
  std::string call_end;
  bool history = true;  // the template renders assistant tool calls and tool results
};

const std::vector<TemplateCase>& cases() {
  static const std::vector<TemplateCase> kCases = {
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", ChatFormat::kHermes,
       {"Current weather for a city", "<tool_call>\n{\"name\": \"get_weather\"", "<tool_response>", "21"},
       "<tool_call>\n{\"name\": \"get_weather\"", "<|im_end|>"},
      {"Qwen-Qwen2.5-7B-Instruct.jinja", ChatFormat::kHermes,
       {"<tools>", "Current weather for a city", "<tool_call>\n{\"name\": \"get_weather\"", "<tool_response>\n{\"temperature\": 21}"},
       "<tool_call>\n{\"name\": \"get_weather\"", "<|im_end|>"},
      {"Qwen-Qwen3-0.6B.jinja", ChatFormat::kHermes,
       {"<tools>", "Current weather for a city", "<tool_call>\n{\"name\": \"get_weather\"", "<tool_response>"},
       "<tool_call>\n{\"name\": \"get_weather\"", "<|im_end|>"},
      {"Qwen3-Coder.jinja", ChatFormat::kQwen3Coder,
       {"<tools>", "Current weather for a city", "<function=get_weather>\n<parameter=location>\nParis\n</parameter>", "<tool_response>"},
       "<tool_call>\n<function=get_weather>", "<|im_end|>"},
      {"GLM-4.6.jinja", ChatFormat::kGlm45,
       {"Current weather for a city", "<tool_call>get_weather", "<arg_key>location</arg_key>", "<arg_value>Paris</arg_value>",
        "<tool_response>"},
       "<tool_call>get_weather", "<|observation|>"},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", ChatFormat::kLlama3,
       {"Environment: ipython", "Current weather for a city", "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}",
        "<|start_header_id|>ipython<|end_header_id|>"},
       "{\"name\": \"get_weather\"", "<|eot_id|>"},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", ChatFormat::kLlama3,
       {"Current weather for a city", "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}",
        "<|start_header_id|>ipython<|end_header_id|>"},
       "{\"name\": \"get_weather\"", "<|eot_id|>"},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ChatFormat::kMistralNemo,
       {"[AVAILABLE_TOOLS]", "Current weather for a city", "[TOOL_CALLS][{\"name\": \"get_weather\"", "\"id\": \"abc123XYZ\"",
        "[TOOL_RESULTS]"},
       "[TOOL_CALLS]", "</s>"},
      {"openai-gpt-oss-120b.jinja", ChatFormat::kGptOss,
       {"namespace functions", "// Current weather for a city", "type get_weather", "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>",
        "<|start|>functions.get_weather to=assistant"},
       " to=functions.", "<|call|>"},
      {"meetkai-functionary-medium-v3.2.jinja", ChatFormat::kFunctionaryV32,
       {"namespace functions", "// Current weather for a city", ">>>get_weather\n{\"location\": \"Paris\"}"}, "get_weather\n{", "<|eot_id|>"},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", ChatFormat::kDeepSeekR1,
       {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n", "<｜tool▁output▁begin｜>"},
       "<｜tool▁calls▁begin｜>", "<｜end▁of▁sentence｜>"},
      {"CohereForAI-c4ai-command-r-plus-tool_use.jinja", ChatFormat::kCommandR,
       {"def get_weather(", "Current weather for a city", "Action:\n```json\n", "\"tool_name\": \"get_weather\"", "<results>"},
       "Action:", "<|END_OF_TURN_TOKEN|>"},
      {"ibm-granite-granite-3.3-2B-Instruct.jinja", ChatFormat::kGranite,
       {"<|start_of_role|>available_tools<|end_of_role|>", "Current weather for a city", "<|tool_call|>"}, "", "", false},
      {"LFM2.5-Instruct.jinja", ChatFormat::kLfm2, {"List of tools: [{\"type\": \"function\"", "Current weather for a city"}, "", "",
       false},
      {"google-gemma-4-31B-it.jinja", ChatFormat::kGemma4,
       {"<|tool>declaration:get_weather{description:<|\"|>Current weather for a city<|\"|>",
        "<|tool_call>call:get_weather{location:<|\"|>Paris<|\"|>}<tool_call|>", "<|tool_response>response:get_weather{value:"},
       "<|tool_call>", "<|tool_response>"},
      {"moonshotai-Kimi-K2.jinja", ChatFormat::kKimiK2,
       {"Current weather for a city", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>",
        "## Return of"},
       "<|tool_calls_section_begin|>", "<|im_end|>"},
  };
  return kCases;
}

nlohmann::ordered_json conversation(ChatFormat format) {
  const std::string id = "abc123XYZ";  // Mistral's templates want 9 characters
  return nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": ")" + id + R"(", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": ")" + id + R"(", "name": "get_weather", "content": "{\"temperature\": 21}"},
    {"role": "assistant", "content": "It is 21 degrees in Paris."},
    {"role": "user", "content": "Thanks! And tomorrow?"}
  ])");
  (void)format;
}

TEST(ToolRender, TemplatesDetectAndRenderTools) {
  const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(kTools);
  for (const TemplateCase& c : cases()) {
    const std::string path = ox::test::shared_path(std::string("templates/") + c.file);
    if (!ox::test::file_exists(path)) GTEST_SKIP() << "no " << path;
    const std::string source = read_template(c.file);
    EXPECT_EQ(chat_format_name(detect_chat_format(source)), chat_format_name(c.format)) << c.file;
    Result<nlohmann::ordered_json> extra = tool_template_context(c.format, tools);
    ASSERT_TRUE(extra.ok()) << extra.status().message();
    nlohmann::ordered_json msgs = conversation(c.format);
    if (!c.history) msgs = nlohmann::ordered_json::array({msgs[1]});  // (and its own system prompt)
    Result<nlohmann::ordered_json> prepared = prepare_tool_messages(c.format, msgs);
    ASSERT_TRUE(prepared.ok()) << prepared.status().message();
    Result<std::string> out = apply_chat_template_ordered(source, *prepared, /*add_generation_prompt=*/true, "<s>", "</s>",
                                                          *extra, test::fixed_clock());
    ASSERT_TRUE(out.ok()) << c.file << ": " << out.status().message();
    for (const std::string& m : c.markers) EXPECT_NE(out->find(m), std::string::npos) << c.file << " lacks " << m << "\n" << *out;
    if (c.call_begin.empty()) continue;
    // The previous call, as rendered, parses back into the same call.
    const size_t b = out->find(c.call_begin);
    ASSERT_NE(b, std::string::npos) << c.file;
    const size_t e = out->find(c.call_end, b);
    ASSERT_NE(e, std::string::npos) << c.file;
    const std::string_view rendered = std::string_view(*out).substr(b, e - b);
    Result<ParsedMessage> parsed = parse_assistant_output(c.format, rendered, false);
    ASSERT_TRUE(parsed.ok()) << c.file;
    ASSERT_EQ(parsed->tool_calls.size(), 1u) << c.file << " parsing: " << rendered;
    EXPECT_EQ(parsed->tool_calls[0].name, "get_weather") << c.file;
    EXPECT_EQ(parsed->tool_calls[0].arguments, R"({"location":"Paris"})") << c.file;
  }
}

TEST(ToolRender, LlamaBuiltinTools) {
  const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
      R"([{"type": "function", "function": {"name": "brave_search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
          {"type": "function", "function": {"name": "code_interpreter", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}])");
  Result<nlohmann::ordered_json> extra = tool_template_context(ChatFormat::kLlama3, tools);
  ASSERT_TRUE(extra.ok());
  EXPECT_EQ((*extra)["builtin_tools"], nlohmann::ordered_json::parse(R"(["brave_search", "code_interpreter"])"));
  const std::string path = ox::test::shared_path("templates/meta-llama-Llama-3.1-8B-Instruct.jinja");
  if (!ox::test::file_exists(path)) GTEST_SKIP() << "no " << path;
  const nlohmann::ordered_json msgs = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Search it"},
    {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "brave_search", "arguments": {"query": "llamas"}}}]}])");
  Result<nlohmann::ordered_json> prepared = prepare_tool_messages(ChatFormat::kLlama3, msgs);
  ASSERT_TRUE(prepared.ok());
  Result<std::string> out = apply_chat_template_ordered(read_template("meta-llama-Llama-3.1-8B-Instruct.jinja"), *prepared, false,
                                                        "<s>", "</s>", *extra, test::fixed_clock());
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_NE(out->find("Tools: brave_search"), std::string::npos) << *out;
  const size_t tag = out->find("<|python_tag|>brave_search.call(query=\"llamas\")");
  ASSERT_NE(tag, std::string::npos) << *out;
  const size_t end = out->find("<|eom_id|>", tag);
  Result<ParsedMessage> parsed = parse_assistant_output(ChatFormat::kLlama3, std::string_view(*out).substr(tag, end - tag), false);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->tool_calls.size(), 1u);
  EXPECT_EQ(parsed->tool_calls[0].arguments, R"({"query":"llamas"})");
}

TEST(ToolRender, OtherTemplatesDetect) {
  struct Row {
    const char* file;
    ChatFormat format;
  };
  for (const Row& r : {Row{"google-gemma-2-2b-it.jinja", ChatFormat::kContentOnly}, Row{"microsoft-Phi-3.5-mini-instruct.jinja", ChatFormat::kContentOnly},
                       Row{"HuggingFaceTB-SmolLM3-3B.jinja", ChatFormat::kContentOnly}}) {
    const std::string path = ox::test::shared_path(std::string("templates/") + r.file);
    if (!ox::test::file_exists(path)) continue;
    EXPECT_EQ(chat_format_name(detect_chat_format(read_template(r.file))), chat_format_name(r.format)) << r.file;
  }
}

TEST(ToolRender, ToolChoiceAndMessages) {
  EXPECT_EQ(parse_tool_choice("required")->mode, ToolChoice::Mode::kRequired);
  EXPECT_EQ(parse_tool_choice("none")->mode, ToolChoice::Mode::kNone);
  EXPECT_EQ(parse_tool_choice(nullptr)->mode, ToolChoice::Mode::kAuto);
  Result<ToolChoice> named = parse_tool_choice(nlohmann::json::parse(R"({"type": "function", "function": {"name": "f"}})"));
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->mode, ToolChoice::Mode::kNamed);
  EXPECT_EQ(named->name, "f");
  EXPECT_FALSE(parse_tool_choice("sometimes").ok());
  EXPECT_FALSE(parse_tool_choice(nlohmann::json::parse(R"({"type": "function"})")).ok());
  EXPECT_FALSE(tool_template_context(ChatFormat::kHermes, nlohmann::ordered_json::parse(R"([{"type": "function"}])")).ok());
  const nlohmann::ordered_json bad = nlohmann::ordered_json::parse(
      R"([{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{not json"}}]}])");
  Result<nlohmann::ordered_json> r = prepare_tool_messages(ChatFormat::kHermes, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("messages[0].tool_calls[0].function.arguments"), std::string::npos);
  Result<nlohmann::ordered_json> as_text = prepare_tool_messages(ChatFormat::kFunctionaryV32, nlohmann::ordered_json::parse(
      R"([{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}])"));
  ASSERT_TRUE(as_text.ok());
  EXPECT_EQ((*as_text)[0]["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
  EXPECT_EQ((*as_text)[0]["content"], "");
  // Odd JSON from a caller is an error or passed through, never an abort (no exceptions here).
  EXPECT_TRUE(prepare_tool_messages(ChatFormat::kHermes, nlohmann::ordered_json::parse(R"([{"role": 5, "tool_calls": 3}, 7])")).ok());
  EXPECT_FALSE(prepare_tool_messages(ChatFormat::kHermes, nlohmann::ordered_json::parse(R"({"role": "user"})")).ok());
  EXPECT_TRUE(prompt_opens_reasoning(ChatFormat::kDeepSeekR1, "<｜Assistant｜><think>\n"));
  EXPECT_FALSE(prompt_opens_reasoning(ChatFormat::kDeepSeekR1, "<｜Assistant｜><think>\n</think>"));
  EXPECT_FALSE(chat_format_from_name("nope").ok());
  for (const ChatFormatDef& d : all_chat_formats()) EXPECT_EQ(*chat_format_from_name(d.name), d.format);
}

}  // namespace
}  // namespace ox::chat
