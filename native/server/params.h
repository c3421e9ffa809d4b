// Request bodies of /v1/chat/completions and /v1/completions parsed into typed parameters. One
// table (kFields in params.cpp) lists every OpenAI field: the ones implemented with their reader,
// and the ones not implemented yet with the reason; a field in neither is unknown. Both kinds are
// refused with 400 naming the field, so nothing a client sends is silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sampler/params.h"
#include "core/session/tool_chat.h"
#include "native/server/api_error.h"

namespace ox::server {

enum class Endpoint : unsigned { kChat = 1, kCompletion = 2 };

// The most choices (`n`) a request may ask for: -np's limit. Each choice takes a slot, so the route
// also refuses more than the server has.
inline constexpr int kMaxChoices = 256;

// Structured output a request asks for: none, a GBNF grammar (llama-server's `grammar`), or JSON
// (response_format json_object / json_schema, llama-server's `json_schema`; an empty schema: any
// JSON object).
struct OutputConstraint {
  enum class Kind { kNone, kGrammar, kJsonSchema } kind = Kind::kNone;
  std::string text;  // the grammar, or the schema as JSON text
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;
  // chat: [{role, content: string}], content parts joined; assistant turns may add tool_calls
  // ([{id, type, function: {name, arguments}}]), role "tool" turns carry tool_call_id.
  nlohmann::ordered_json messages;
  bool has_prompt_ids = false;      // completion: token ids given instead of text
  std::string prompt_text;
  std::vector<int32_t> prompt_ids;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int64_t max_tokens = -1;     // -1: until end of generation or the slot's context is full
  int n_choices = 1;           // n: 1 to kMaxChoices here; the route refuses more than the server's slots
  // Context shift (with the server's --context-shift), llama-server's fields: prompt tokens kept
  // after BOS (-1: all; absent: the server's --keep) and tokens dropped per shift (0: half).
  std::optional<int> n_keep;
  int n_discard = 0;
  // Every sampler field of core/sampler's registry, by llama-server's name (temperature, top_k,
  // frequency_penalty, logit_bias, dry_*, mirostat, samplers, ...), checked by validate().
  SamplerParams sampling;
  OutputConstraint constraint;
  ToolOptions tools;  // tools, tool_choice, parallel_tool_calls
  std::vector<std::string> stop;
  bool ignore_eos = false;
  // Log probabilities: chat `logprobs: true` with `top_logprobs` alternatives (0 to 20), completions
  // the legacy `logprobs: N` (0 to 20 alternatives).
  bool logprobs = false;
  int top_logprobs = 0;
  bool has_top_logprobs = false;
};

// Parses and validates a body. On failure returns false and fills `error` (400, naming the field).
bool parse_completion_request(std::string_view body, Endpoint endpoint, CompletionRequest* out, ApiError* error);

// Parses a body that must be a JSON object (the other POST routes).
bool parse_json_object(std::string_view body, nlohmann::ordered_json* out, ApiError* error);

// The names of the table (for tests and docs): accepted ones, then not-yet-implemented ones.
struct FieldInfo {
  const char* name;
  unsigned endpoints;  // bits of Endpoint
  bool implemented;
  const char* note;
};
std::span<const FieldInfo> request_fields();

}  // namespace ox::server
