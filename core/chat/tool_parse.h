// A model's reply parsed into an OpenAI assistant message: content, reasoning_content and
// tool_calls (id, name, JSON arguments), complete or partial (streaming), and the OpenAI delta
// chunks between two partial parses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/reasoning.h"
#include "core/chat/tool_format.h"

namespace ox::chat {

struct ToolCall {
  std::string id;         // the model's own id where the format has one (Mistral, Kimi), else empty
  std::string name;
  std::string arguments;  // JSON text, whitespace outside strings removed; partial: a prefix of it
  bool operator==(const ToolCall&) const = default;
};

struct ParsedMessage {
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCall> tool_calls;
  bool operator==(const ParsedMessage&) const = default;

  // {"role": "assistant", "content": ..., "reasoning_content"?: ..., "tool_calls"?: [...]}
  // (content null when empty and there are tool calls, as OpenAI).
  nlohmann::ordered_json to_json() const;
};

struct ParseOptions {
  ReasoningFormat reasoning_format = ReasoningFormat::kDeepSeek;
  bool thinking_forced_open = false;  // prompt_opens_reasoning() of the rendered prompt
  bool parse_tool_calls = true;       // false for tool_choice "none": tool syntax stays content
  // The request's tools (OpenAI array) or null: types the text values of XML formats (Qwen3-Coder,
  // GLM) by each parameter's schema; without it a value that reads as JSON is taken as JSON.
  const nlohmann::json* tools = nullptr;
};

// Parses `text`, the model's output after the rendered prompt. is_partial: the output so far;
// text that may still turn into syntax (a marker's first bytes, an unfinished call) is held back,
// so each partial parse's content, reasoning and arguments are prefixes of the next one's.
// Malformed tool-call syntax is kept as content, as llama.cpp does.
Result<ParsedMessage> parse_assistant_output(ChatFormat format, std::string_view text, bool is_partial,
                                             const ParseOptions& options = {});

// Ids: keeps the model's ids, fills empty ones from `ids` (the ids given to earlier partial parses
// of this reply, so a call keeps its id while streaming), then from `generate`.
void assign_tool_call_ids(ParsedMessage* msg, std::vector<std::string>* ids, const std::function<std::string()>& generate);
// llama-server's ids: 32 random letters and digits; Mistral's templates require 9.
std::string random_tool_call_id(ChatFormat format, uint64_t* rng_state);

// The OpenAI `delta` objects (choices[0].delta) taking a client from `prev` to `next`:
// {"reasoning_content": ...}, {"content": ...}, and for tool calls {"tool_calls": [{"index", "id",
// "type": "function", "function": {"name", "arguments"}}]} when a call first appears, then
// {"tool_calls": [{"index", "function": {"arguments": MORE}}]}. An error if `next` does not
// extend `prev` (text removed, fewer calls).
Result<std::vector<nlohmann::ordered_json>> message_deltas(const ParsedMessage& prev, const ParsedMessage& next);

}  // namespace ox::chat
