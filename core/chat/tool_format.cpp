// The tool-call format registry and what a template needs to render tools: detection strings as
// llama.cpp's common/chat.cpp matches them, template variables, message fix-ups.
#include "core/chat/tool_format.h"

#include <algorithm>

namespace ox::chat {
namespace {

bool has(std::string_view src, std::string_view s) { return src.find(s) != std::string_view::npos; }

bool detect_gpt_oss(std::string_view s) { return has(s, "<|channel|>"); }
bool detect_functionary(std::string_view s) { return has(s, ">>>all") && has(s, ">>>${recipient}"); }
bool detect_kimi(std::string_view s) { return has(s, "<|tool_calls_section_begin|>") && has(s, "<|tool_call_begin|>"); }
bool detect_qwen3_coder(std::string_view s) {
  return has(s, "<tool_call>") && has(s, "<function=") && has(s, "<parameter=");
}
bool detect_glm(std::string_view s) { return has(s, "<tool_call>") && has(s, "<arg_key>") && has(s, "<arg_value>"); }
bool detect_hermes(std::string_view s) { return has(s, "<tool_call>"); }
bool detect_mistral(std::string_view s) { return has(s, "[TOOL_CALLS]"); }
bool detect_granite(std::string_view s) { return has(s, "<|tool_call|>") && has(s, "<|start_of_role|>"); }
bool detect_deepseek(std::string_view s) { return has(s, "tool▁calls▁begin") || has(s, "tool_calls_begin"); }
bool detect_command_r(std::string_view s) {
  return has(s, "<|START_ACTION|>") || (has(s, "<|START_OF_TURN_TOKEN|>") && has(s, "Action:"));
}
bool detect_llama3(std::string_view s) {
  return has(s, "<|start_header_id|>") && (has(s, "ipython") || has(s, "<|python_tag|>")) && has(s, "tools");
}
bool detect_lfm2(std::string_view s) {
  return (has(s, "List of tools: [") && !has(s, "<|tool_list_start|>")) ||
         (has(s, "<|tool_list_start|>") && has(s, "<|tool_call_start|>"));
}
bool detect_gemma4(std::string_view s) { return has(s, "'<|tool_call>call:'"); }  // as llama.cpp's chat.cpp
bool detect_generic(std::string_view s) { return has(s, "tools") || has(s, "tool_calls"); }

constexpr ReasoningTags kThink{"<think>", "</think>"};
constexpr ReasoningTags kNoReasoning{};

const std::vector<ChatFormatDef> kFormats = {
    {ChatFormat::kGemma4, "gemma4", detect_gemma4, {"<|channel>thought", "<channel|>"}, true, {"<|tool_call>"}},
    {ChatFormat::kGptOss, "gpt-oss", detect_gpt_oss, kNoReasoning, true, {" to=functions."}},
    {ChatFormat::kFunctionaryV32, "functionary-v3.2", detect_functionary, kNoReasoning, false, {">>>"}},
    {ChatFormat::kKimiK2, "kimi-k2", detect_kimi, kThink, true, {"<|tool_calls_section_begin|>"}},
    {ChatFormat::kQwen3Coder, "qwen3-coder", detect_qwen3_coder, kThink, true, {"<tool_call>"}},
    {ChatFormat::kGlm45, "glm-4.5", detect_glm, kThink, true, {"<tool_call>"}},
    {ChatFormat::kHermes, "hermes", detect_hermes, kThink, true, {"<tool_call>", "<function="}},
    {ChatFormat::kMistralNemo, "mistral-nemo", detect_mistral, kNoReasoning, true, {"[TOOL_CALLS]"}},
    {ChatFormat::kGranite, "granite", detect_granite, kThink, true, {"<|tool_call|>"}},
    {ChatFormat::kDeepSeekR1, "deepseek-r1", detect_deepseek, kThink, true,
     {"<｜tool▁calls▁begin｜>", "<｜tool_calls_begin｜>", "<｜tool calls begin｜>", "<｜tool\\_calls\\_begin｜>"}},
    {ChatFormat::kCommandR, "command-r", detect_command_r, {"<|START_THINKING|>", "<|END_THINKING|>"}, true,
     {"<|START_ACTION|>", "Action:"}},
    {ChatFormat::kLlama3, "llama3", detect_llama3, kNoReasoning, true, {"<|python_tag|>", "{\""}},
    {ChatFormat::kLfm2, "lfm2", detect_lfm2, kThink, true, {"<|tool_call_start|>"}},
    {ChatFormat::kGeneric, "generic", detect_generic, kThink, true, {"{\""}},
    {ChatFormat::kContentOnly, "content-only", nullptr, kThink, true, {}},
};

// Llama 3.x's built-in tools: a tool of one of these names is announced through `builtin_tools`
// (and called with <|python_tag|>NAME.call(...)), as llama.cpp's Llama 3.x handler does.
std::string_view llama3_builtin(std::string_view name) {
  if (name == "wolfram_alpha") return "wolfram_alpha";
  if (name == "web_search" || name == "brave_search") return "brave_search";
  if (name == "python" || name == "code_interpreter") return "code_interpreter";
  return {};
}

}  // namespace

const std::vector<ChatFormatDef>& all_chat_formats() { return kFormats; }

const ChatFormatDef& chat_format_def(ChatFormat format) {
  for (const ChatFormatDef& d : kFormats) {
    if (d.format == format) return d;
  }
  OX_CHECK(false);
  return kFormats.back();
}

std::string_view chat_format_name(ChatFormat format) { return chat_format_def(format).name; }

Result<ChatFormat> chat_format_from_name(std::string_view name) {
  for (const ChatFormatDef& d : kFormats) {
    if (d.name == name) return d.format;
  }
  std::string known;
  for (const ChatFormatDef& d : kFormats) known += (known.empty() ? "" : ", ") + std::string(d.name);
  return error(ErrorCode::kInvalidArgument, "unknown chat format '" + std::string(name) + "' (known: " + known + ")");
}

ChatFormat detect_chat_format(std::string_view template_source) {
  for (const ChatFormatDef& d : kFormats) {
    if (d.detect != nullptr && d.detect(template_source)) return d.format;
  }
  return ChatFormat::kContentOnly;
}

Result<ToolChoice> parse_tool_choice(const nlohmann::json& tool_choice) {
  ToolChoice out;
  if (tool_choice.is_null()) return out;
  if (tool_choice.is_string()) {
    const std::string s = tool_choice.get<std::string>();
    if (s == "auto") return out;
    if (s == "none") out.mode = ToolChoice::Mode::kNone;
    else if (s == "required") out.mode = ToolChoice::Mode::kRequired;
    else return error(ErrorCode::kInvalidArgument, "tool_choice: expected \"auto\", \"none\", \"required\" or an object, got \"" + s + "\"");
    return out;
  }
  if (tool_choice.is_object()) {
    const auto fn = tool_choice.find("function");
    if (fn != tool_choice.end() && fn->is_object()) {
      const auto name = fn->find("name");
      if (name != fn->end() && name->is_string() && !name->get<std::string>().empty()) {
        out.mode = ToolChoice::Mode::kNamed;
        out.name = name->get<std::string>();
        return out;
      }
    }
  }
  return error(ErrorCode::kInvalidArgument,
               "tool_choice: expected {\"type\": \"function\", \"function\": {\"name\": ...}}, got " +
                   tool_choice.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Result<nlohmann::ordered_json> tool_template_context(ChatFormat format, const nlohmann::ordered_json& tools,
                                                     int enable_thinking) {
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (!tools.is_null()) {
    if (!tools.is_array()) return error(ErrorCode::kInvalidArgument, "tools: expected an array, got " + std::string(tools.type_name()));
    nlohmann::ordered_json builtin = nlohmann::ordered_json::array();
    for (size_t i = 0; i < tools.size(); ++i) {
      const nlohmann::ordered_json& t = tools[i];
      const auto fn = t.is_object() ? t.find("function") : t.end();
      if (!t.is_object() || fn == t.end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
        return error(ErrorCode::kInvalidArgument, strfmt("tools[%zu]: expected {\"type\": \"function\", \"function\": {\"name\": ...}}", i));
      }
      const std::string_view b = llama3_builtin((*fn)["name"].get_ref<const std::string&>());
      if (!b.empty() && std::find(builtin.begin(), builtin.end(), b) == builtin.end()) builtin.push_back(b);
    }
    extra["tools"] = tools;
    if (format == ChatFormat::kLlama3 && !builtin.empty()) extra["builtin_tools"] = builtin;
  }
  if (enable_thinking >= 0) extra["enable_thinking"] = enable_thinking != 0;
  return extra;
}

Result<nlohmann::ordered_json> prepare_tool_messages(ChatFormat format, const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) return error(ErrorCode::kInvalidArgument, "messages: expected an array");
  const bool as_object = chat_format_def(format).history_args_as_object;
  nlohmann::ordered_json out = messages;
  for (size_t i = 0; i < out.size(); ++i) {
    nlohmann::ordered_json& m = out[i];
    if (!m.is_object()) continue;
    if (format != ChatFormat::kGptOss && m.contains("role") && m["role"] == "developer") m["role"] = "system";
    const bool has_calls = m.contains("tool_calls") && m["tool_calls"].is_array();
    if (has_calls && (!m.contains("content") || m["content"].is_null())) m["content"] = "";  // templates test `in content`
    if (format == ChatFormat::kGptOss && m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
      m["thinking"] = m["reasoning_content"];  // gpt-oss's template reads "thinking"
      if (has_calls && !m["tool_calls"].empty()) m.erase("content");
    }
    if (!has_calls) continue;
    for (size_t k = 0; k < m["tool_calls"].size(); ++k) {
      nlohmann::ordered_json& tc = m["tool_calls"][k];
      if (!tc.is_object() || !tc.contains("function") || !tc["function"].is_object()) continue;
      nlohmann::ordered_json& fn = tc["function"];
      if (!fn.contains("arguments")) continue;
      nlohmann::ordered_json& args = fn["arguments"];
      if (as_object && args.is_string()) {
        nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(args.get<std::string>(), nullptr, false);
        if (parsed.is_discarded()) {
          return error(ErrorCode::kInvalidArgument,
                       strfmt("messages[%zu].tool_calls[%zu].function.arguments: not valid JSON", i, k));
        }
        args = std::move(parsed);
      } else if (!as_object && !args.is_string()) {
        args = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // (never aborts on bad UTF-8)
      }
    }
  }
  return out;
}

bool prompt_opens_reasoning(ChatFormat format, std::string_view prompt) {
  const std::string_view start = chat_format_def(format).reasoning.start;
  if (start.empty()) return false;
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.remove_suffix(1);
  return prompt.size() >= start.size() && prompt.substr(prompt.size() - start.size()) == start;
}

}  // namespace ox::chat
