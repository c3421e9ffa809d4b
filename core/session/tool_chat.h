// Tool calls in a chat turn, for every front end (server, CLI, JS): the request's tools rendered
// through the model's template, the grammar that forces or lazily checks a call, and the reply
// parsed into OpenAI's message (tool_calls, reasoning_content) whole or as streaming deltas.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/tool_format.h"
#include "core/chat/tool_parse.h"
#include "core/sampler/constraint.h"

namespace ox {

class LoadedModel;

// OpenAI's tools, tool_choice and parallel_tool_calls.
struct ToolOptions {
  nlohmann::ordered_json tools;  // an array of {"type": "function", "function": {name, description?, parameters?}}; null: none
  chat::ToolChoice choice;
  bool parallel_tool_calls = true;
  bool active() const { return tools.is_array() && !tools.empty(); }
};

// The tools array checked: each {"type": "function", "function": {"name": non-empty string,
// "description"?: string, "parameters"?: object}}; an error names the element and key.
Status check_tools(const nlohmann::ordered_json& tools);

// The format a model's replies are parsed in: its template's (detect_chat_format), or the generic
// JSON form (llama.cpp's fallback) for a template that knows no tools.
chat::ChatFormat tool_chat_format(const LoadedModel& model);

struct ToolChatTurn {
  std::vector<int32_t> prompt;
  chat::ChatFormat format = chat::ChatFormat::kGeneric;
  bool thinking_forced_open = false;  // the prompt opened a reasoning block (checked with tools only)
  // tool_choice required / named: a grammar forcing the call(s); auto: the same grammar, lazy
  // (from the format's trigger on); none, or auto in a format without a call syntax: null.
  std::shared_ptr<TokenConstraint> constraint;
};

// The prompt of `messages` (OpenAI's: tool results as role "tool" with tool_call_id, assistant
// turns with tool_calls) with `tools` in the template, and the constraint of tool_choice.
// required / named with a format that has no call syntax (content-only) is an error.
Result<ToolChatTurn> prepare_tool_chat(const LoadedModel& model, const nlohmann::ordered_json& messages,
                                       const ToolOptions& tools);

// The rendered prompt text alone (/apply-template, `oxidize template`).
Result<std::string> render_tool_chat(const LoadedModel& model, const nlohmann::ordered_json& messages,
                                     const ToolOptions& tools);

// One reply's text as it streams, parsed into the assistant message and OpenAI deltas.
class ToolReply {
 public:
  ToolReply(chat::ChatFormat format, const ToolOptions& tools, bool thinking_forced_open, uint64_t id_seed);

  // More generated text: the `delta` objects (choices[0].delta) it makes certain.
  std::vector<nlohmann::ordered_json> append(std::string_view text);
  // Generation ended: parses the whole reply; returns the deltas still owed (none if the final
  // parse does not extend what was streamed, e.g. a call that turned out malformed).
  std::vector<nlohmann::ordered_json> finish();
  // The reply as parsed so far (after finish(): the whole of it), call ids assigned.
  const chat::ParsedMessage& message() const { return message_; }
  // llama-server's: "tool_calls" when the reply holds calls and generation stopped by itself
  // (end of generation, stop string), else `generation_reason` ("length", "abort").
  std::string finish_reason(std::string_view generation_reason) const;

 private:
  std::vector<nlohmann::ordered_json> advance(bool is_partial);

  chat::ChatFormat format_;
  nlohmann::json tools_;  // for typing XML-format values
  chat::ParseOptions options_;
  uint64_t rng_;
  std::vector<std::string> ids_;
  std::string text_;
  chat::ParsedMessage message_;
};

}  // namespace ox
