// Tool-call formats: which syntax a model writes its tool calls and reasoning in, detected from
// its chat template's source, one registry row per format (llama.cpp common/chat.cpp's families).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace ox::chat {

enum class ChatFormat {
  kContentOnly,     // no tool syntax known: everything is content (reasoning still split)
  kGeneric,         // {"tool_calls": [{"name", "arguments"}]} / {"tool_call": ...} / {"response": ...}
  kHermes,          // <tool_call>{"name", "arguments"}</tool_call>: Hermes 2 Pro, Qwen 2.5, Qwen 3
  kQwen3Coder,      // <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
  kGlm45,           // <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>: GLM 4.5/4.6
  kLlama3,          // {"name", "parameters"} or <|python_tag|>NAME.call(k=v) / code: Llama 3.1/3.2/3.3
  kMistralNemo,     // [TOOL_CALLS][{"name", "arguments", "id"}]
  kGptOss,          // harmony: <|channel|>commentary to=functions.NAME<|message|>ARGS
  kFunctionaryV32,  // >>>NAME\nARGS / >>>all\nTEXT
  kDeepSeekR1,      // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json ...
  kCommandR,        // Action: ```json [{"tool_name", "parameters"}]``` (R+), <|START_ACTION|>[...]<|END_ACTION|> (R7B)
  kGranite,         // <|tool_call|>[{"name", "arguments"}], <think>/<response>
  kKimiK2,          // <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>ARGS...
  kLfm2,            // <|tool_call_start|>[NAME(key="value", n=1), ...]<|tool_call_end|>: LFM2 / LFM2.5
  kGemma4,          // <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>, <|channel>thought...<channel|>
};

// Where reasoning sits in a reply (empty start: the format has none, or handles it itself).
struct ReasoningTags {
  std::string_view start;
  std::string_view end;
};

struct ChatFormatDef {
  ChatFormat format;
  std::string_view name;                     // "hermes", "llama3", ... (stable: logs, tests, JS)
  bool (*detect)(std::string_view source);   // nullptr: never detected, only chosen by name
  ReasoningTags reasoning;
  // Whether the template wants a previous assistant turn's tool_calls[].function.arguments as an
  // object (it applies tojson / items) or as the JSON text (it concatenates strings).
  bool history_args_as_object;
  // The tool-call markers the reply's content is split at (also the lazy grammar's triggers).
  std::vector<std::string_view> tool_call_markers;
};

// Every format, in detection order (the first whose detect() matches wins).
const std::vector<ChatFormatDef>& all_chat_formats();
const ChatFormatDef& chat_format_def(ChatFormat format);
std::string_view chat_format_name(ChatFormat format);
Result<ChatFormat> chat_format_from_name(std::string_view name);

// The format a template's source implies; kGeneric when it mentions tools in no known syntax,
// kContentOnly when it has no tools at all.
ChatFormat detect_chat_format(std::string_view template_source);

// tool_choice as OpenAI sends it: "auto", "none", "required" or {"type": "function",
// "function": {"name": N}}.
struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kNamed } mode = Mode::kAuto;
  std::string name;  // kNamed
};
Result<ToolChoice> parse_tool_choice(const nlohmann::json& tool_choice);

// What apply_chat_template's `extra` gets for a request with tools (an OpenAI array, or null):
// `tools`, plus the variables some templates read: Llama 3.x `builtin_tools` (tools named
// wolfram_alpha / brave_search / web_search / code_interpreter), gpt-oss `builtin_tools`,
// `enable_thinking` when the caller sets it. Errors name a malformed tool.
Result<nlohmann::ordered_json> tool_template_context(ChatFormat format, const nlohmann::ordered_json& tools,
                                                     int enable_thinking = -1);

// The messages as the template wants them: previous tool calls' arguments as objects or as JSON
// text (see history_args_as_object); "developer" as "system" except for gpt-oss.
Result<nlohmann::ordered_json> prepare_tool_messages(ChatFormat format, const nlohmann::ordered_json& messages);

// Whether the rendered prompt leaves the model inside a reasoning block (it ends with the
// format's open reasoning tag, e.g. DeepSeek R1's "<think>\n"): pass it to parsing.
bool prompt_opens_reasoning(ChatFormat format, std::string_view prompt);

}  // namespace ox::chat
