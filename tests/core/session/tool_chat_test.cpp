// prepare_tool_chat and ToolReply: tools rendered through a real template (Qwen 2.5's, Hermes
// syntax) on stories260K, the constraint each tool_choice gets, and a fixed reply streamed in
// pieces of every size giving OpenAI deltas that add up to the whole parsed message.
#include "core/session/tool_chat.h"

#include <gtest/gtest.h>

#include <string>

#include "core/session/session.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

const nlohmann::ordered_json& tools() {
  static const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city", "parameters": {"type": "object",
    "properties": {"location": {"type": "string"}}, "required": ["location"]}}}])");
  return kTools;
}

std::shared_ptr<const LoadedModel> qwen_templated() {
  auto m = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  EXPECT_TRUE(m.ok()) << m.status().message();
  std::vector<uint8_t> src = test::read_file_bytes(test::shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja"));
  auto t = (*m)->with_chat_template(std::string(src.begin(), src.end()));
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t.value() : nullptr;
}

nlohmann::ordered_json ask() {
  return nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Weather in Paris?"}])");
}

TEST(ToolChat, PromptConstraintPerToolChoice) {
  std::shared_ptr<const LoadedModel> model = qwen_templated();
  ASSERT_NE(model, nullptr);
  ToolOptions opts;
  opts.tools = tools();
  Result<ToolChatTurn> automatic = prepare_tool_chat(*model, ask(), opts);
  ASSERT_TRUE(automatic.ok()) << automatic.status().message();
  EXPECT_EQ(automatic->format, chat::ChatFormat::kHermes);
  EXPECT_NE(dynamic_cast<LazyGrammarConstraint*>(automatic->constraint.get()), nullptr);
  Result<std::string> text = model->tokenizer().decode(automatic->prompt, /*render_special=*/true);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("<tools>"), std::string::npos);
  EXPECT_NE(text->find("\"name\": \"get_weather\""), std::string::npos);

  opts.choice.mode = chat::ToolChoice::Mode::kRequired;
  Result<ToolChatTurn> required = prepare_tool_chat(*model, ask(), opts);
  ASSERT_TRUE(required.ok());
  ASSERT_NE(required->constraint, nullptr);
  EXPECT_EQ(dynamic_cast<LazyGrammarConstraint*>(required->constraint.get()), nullptr);  // forced from the start
  EXPECT_FALSE(required->constraint->can_end());

  opts.choice.mode = chat::ToolChoice::Mode::kNone;
  Result<ToolChatTurn> none = prepare_tool_chat(*model, ask(), opts);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->constraint, nullptr);
  EXPECT_EQ(none->prompt, automatic->prompt);  // the tools are still shown

  opts.choice = {chat::ToolChoice::Mode::kNamed, "nope"};
  EXPECT_FALSE(prepare_tool_chat(*model, ask(), opts).ok());
}

// The named-parameter formats (and Functionary v3.2's auto) get a grammar through the same wiring:
// forced for required, lazy for auto.
TEST(ToolChat, EveryFormatWithCallSyntaxGetsAGrammar) {
  auto base = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(base.ok());
  const std::pair<const char*, chat::ChatFormat> files[] = {{"Qwen3-Coder.jinja", chat::ChatFormat::kQwen3Coder},
                                                            {"GLM-4.6.jinja", chat::ChatFormat::kGlm45},
                                                            {"LFM2.5-Instruct.jinja", chat::ChatFormat::kLfm2},
                                                            {"google-gemma-4-31B-it.jinja", chat::ChatFormat::kGemma4},
                                                            {"meetkai-functionary-medium-v3.2.jinja", chat::ChatFormat::kFunctionaryV32}};
  for (const auto& [file, format] : files) {
    const std::string path = test::shared_path(std::string("templates/") + file);
    if (!test::file_exists(path)) GTEST_SKIP() << "no " << path;
    std::vector<uint8_t> src = test::read_file_bytes(path);
    auto model = (*base)->with_chat_template(std::string(src.begin(), src.end()));
    ASSERT_TRUE(model.ok()) << file << ": " << model.status().message();
    ToolOptions opts;
    opts.tools = tools();
    Result<ToolChatTurn> automatic = prepare_tool_chat(**model, ask(), opts);
    ASSERT_TRUE(automatic.ok()) << file << ": " << automatic.status().message();
    EXPECT_EQ(automatic->format, format) << file;
    EXPECT_NE(dynamic_cast<LazyGrammarConstraint*>(automatic->constraint.get()), nullptr) << file;
    opts.choice.mode = chat::ToolChoice::Mode::kRequired;
    Result<ToolChatTurn> required = prepare_tool_chat(**model, ask(), opts);
    ASSERT_TRUE(required.ok()) << file << ": " << required.status().message();
    ASSERT_NE(required->constraint, nullptr) << file;
    EXPECT_EQ(dynamic_cast<LazyGrammarConstraint*>(required->constraint.get()), nullptr) << file;
    EXPECT_FALSE(required->constraint->can_end()) << file;
  }
}

TEST(ToolChat, TemplateWithoutToolsReadsGenericJson) {
  auto model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(tool_chat_format(**model), chat::ChatFormat::kGeneric);
}

TEST(ToolChat, CheckToolsNamesTheField) {
  EXPECT_TRUE(check_tools(tools()).is_ok());
  EXPECT_TRUE(check_tools(nlohmann::ordered_json()).is_ok());
  const std::pair<const char*, const char*> bad[] = {
      {R"({"type": "function"})", "tools: expected an array"},
      {R"([1])", "tools[0]: expected an object"},
      {R"([{"type": "retrieval"}])", "tools[0].type"},
      {R"([{"type": "function", "function": {"name": ""}}])", "tools[0].function.name"},
      {R"([{"type": "function", "function": {"name": "f", "parameters": "x"}}])", "tools[0].function.parameters"},
  };
  for (const auto& [json, field] : bad) {
    const Status st = check_tools(nlohmann::ordered_json::parse(json));
    EXPECT_FALSE(st.is_ok()) << json;
    EXPECT_EQ(st.message().rfind(field, 0), 0u) << st.message();
  }
}

// Accumulates deltas as an OpenAI client does.
struct Client {
  std::string content, reasoning;
  std::vector<chat::ToolCall> calls;
  void add(const nlohmann::ordered_json& d) {
    if (d.contains("content")) content += d["content"].get<std::string>();
    if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
    if (!d.contains("tool_calls")) return;
    for (const auto& c : d["tool_calls"]) {
      const size_t i = c["index"].get<size_t>();
      if (i == calls.size()) {
        ASSERT_TRUE(c.contains("id") && c["type"] == "function");
        calls.push_back({c["id"].get<std::string>(), c["function"]["name"].get<std::string>(), ""});
      }
      ASSERT_LT(i, calls.size());
      if (c["function"].contains("arguments")) calls[i].arguments += c["function"]["arguments"].get<std::string>();
    }
  }
};

TEST(ToolChat, StreamedDeltasAddUpToTheMessage) {
  const std::string reply =
      "<think>Paris, then.</think>Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": "
      "\"Paris\"}}\n</tool_call>";
  ToolOptions opts;
  opts.tools = tools();
  for (size_t piece = 1; piece <= reply.size(); ++piece) {
    ToolReply r(chat::ChatFormat::kHermes, opts, /*thinking_forced_open=*/false, /*id_seed=*/7);
    Client client;
    for (size_t at = 0; at < reply.size(); at += piece) {
      for (const auto& d : r.append(std::string_view(reply).substr(at, piece))) client.add(d);
    }
    for (const auto& d : r.finish()) client.add(d);
    const chat::ParsedMessage& m = r.message();
    ASSERT_EQ(m.tool_calls.size(), 1u) << piece;
    EXPECT_EQ(m.tool_calls[0].name, "get_weather");
    EXPECT_EQ(m.tool_calls[0].arguments, "{\"location\":\"Paris\"}");
    EXPECT_EQ(m.tool_calls[0].id.size(), 32u);
    EXPECT_EQ(m.reasoning_content, "Paris, then.");
    EXPECT_EQ(m.content, "Let me look.");
    EXPECT_EQ(client.content, m.content) << piece;
    EXPECT_EQ(client.reasoning, m.reasoning_content) << piece;
    ASSERT_EQ(client.calls.size(), 1u) << piece;
    EXPECT_EQ(client.calls[0], m.tool_calls[0]) << piece;
    EXPECT_EQ(r.finish_reason("stop"), "tool_calls");
    EXPECT_EQ(r.finish_reason("length"), "length");
  }
}

TEST(ToolChat, ToolChoiceNoneKeepsCallSyntaxAsContent) {
  ToolOptions opts;
  opts.tools = tools();
  opts.choice.mode = chat::ToolChoice::Mode::kNone;
  ToolReply r(chat::ChatFormat::kHermes, opts, false, 1);
  r.append("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>");
  r.finish();
  EXPECT_TRUE(r.message().tool_calls.empty());
  EXPECT_NE(r.message().content.find("<tool_call>"), std::string::npos);
  EXPECT_EQ(r.finish_reason("stop"), "stop");
}

}  // namespace
}  // namespace ox
