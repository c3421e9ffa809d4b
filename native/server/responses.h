// OpenAI's response shapes for chat and text completions: the whole JSON answer, and the
// server-sent events of a stream (chunks, the usage chunk, `data: [DONE]`, an error event).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "native/server/api_error.h"
#include "native/server/job.h"
#include "native/server/params.h"

namespace ox::server {

struct ResponseContext {
  Endpoint endpoint = Endpoint::kChat;
  std::string id;  // chatcmpl-... / cmpl-...
  int64_t created = 0;
  std::string model;
};

ResponseContext new_response_context(Endpoint endpoint, std::string model);

nlohmann::ordered_json usage_json(const JobUsage& usage);

// One choice of a whole answer (`index`: its place among the request's n choices). logprobs: the
// choice's `logprobs` (logprobs.h; null when not asked for).
nlohmann::ordered_json text_choice(const ResponseContext& c, int index, const std::string& text,
                                   const std::string& finish_reason, nlohmann::ordered_json logprobs = nullptr);
// A chat choice whose message was parsed (tool_calls, reasoning_content: chat::ParsedMessage::to_json).
nlohmann::ordered_json message_choice(int index, nlohmann::ordered_json message, const std::string& finish_reason,
                                      nlohmann::ordered_json logprobs = nullptr);
// The whole answer: its choices (an array, by index) and the usage of all of them.
nlohmann::ordered_json full_response(const ResponseContext& c, nlohmann::ordered_json choices, const JobUsage& usage);

// Streaming: each choice's opening chunk (chat: the assistant role), text chunks, the closing chunk
// with the finish reason, and (stream_options.include_usage) a chunk with empty choices and the
// usage. A chunk carries one choice, named by its index.
nlohmann::ordered_json opening_chunk(const ResponseContext& c, int index);
nlohmann::ordered_json text_chunk(const ResponseContext& c, int index, std::string_view text,
                                  nlohmann::ordered_json logprobs = nullptr);
// A chat chunk with one `delta` object ({"content"}, {"reasoning_content"}, {"tool_calls": [...]}).
nlohmann::ordered_json delta_chunk(const ResponseContext& c, int index, nlohmann::ordered_json delta);
nlohmann::ordered_json closing_chunk(const ResponseContext& c, int index, const std::string& finish_reason);
nlohmann::ordered_json usage_chunk(const ResponseContext& c, const JobUsage& usage);

std::string sse_event(const nlohmann::ordered_json& data);  // "data: {...}\n\n"
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";
inline constexpr std::string_view kSseKeepAlive = ": keep-alive\n\n";  // a comment: clients skip it

}  // namespace ox::server
