// Chat and text completion JSON in OpenAI's shapes.
#include "native/server/responses.h"

#include <atomic>
#include <chrono>

#include "core/base/status.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;

bool is_chat(const ResponseContext& c) { return c.endpoint == Endpoint::kChat; }

Json base(const ResponseContext& c, bool chunk) {
  const char* object = is_chat(c) ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return Json{{"id", c.id}, {"object", object}, {"created", c.created}, {"model", c.model}};
}

Json finish_value(const std::string& reason) { return reason.empty() ? Json(nullptr) : Json(reason); }

}  // namespace

ResponseContext new_response_context(Endpoint endpoint, std::string model) {
  static std::atomic<uint64_t> counter{0};
  ResponseContext c;
  c.endpoint = endpoint;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  c.created = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  const uint64_t n = counter.fetch_add(1) + 1;
  c.id = strfmt("%s-%llx%06llx", endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(c.created), static_cast<unsigned long long>(n));
  c.model = std::move(model);
  return c;
}

Json usage_json(const JobUsage& u) {
  return Json{{"prompt_tokens", u.n_prompt},
              {"completion_tokens", u.n_generated},
              {"total_tokens", u.n_prompt + u.n_generated},
              {"prompt_tokens_details", {{"cached_tokens", u.n_cached}}}};
}

namespace {

Json response_with(const ResponseContext& c, const char* key, Json value, const std::string& finish_reason,
                   const JobUsage& usage, Json logprobs) {
  Json out = base(c, false);
  Json choice = {{"index", 0}};
  choice[key] = std::move(value);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_value(finish_reason);
  out["choices"] = Json::array({choice});
  out["usage"] = usage_json(usage);
  return out;
}

Json chunk_with(const ResponseContext& c, const char* key, Json value, Json logprobs = nullptr) {
  Json out = base(c, true);
  Json choice = {{"index", 0}};
  choice[key] = std::move(value);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = nullptr;
  out["choices"] = Json::array({choice});
  return out;
}

}  // namespace

Json full_response(const ResponseContext& c, const std::string& text, const std::string& finish_reason,
                   const JobUsage& usage, Json logprobs) {
  if (is_chat(c)) {
    return response_with(c, "message", {{"role", "assistant"}, {"content", text}}, finish_reason, usage, std::move(logprobs));
  }
  return response_with(c, "text", text, finish_reason, usage, std::move(logprobs));
}

Json full_message_response(const ResponseContext& c, Json message, const std::string& finish_reason, const JobUsage& usage,
                           Json logprobs) {
  return response_with(c, "message", std::move(message), finish_reason, usage, std::move(logprobs));
}

Json opening_chunk(const ResponseContext& c) {
  if (is_chat(c)) return chunk_with(c, "delta", {{"role", "assistant"}, {"content", ""}});
  return chunk_with(c, "text", "");
}

Json text_chunk(const ResponseContext& c, std::string_view text, Json logprobs) {
  if (is_chat(c)) return chunk_with(c, "delta", {{"content", text}}, std::move(logprobs));
  return chunk_with(c, "text", text, std::move(logprobs));
}

Json delta_chunk(const ResponseContext& c, Json delta) { return chunk_with(c, "delta", std::move(delta)); }

Json closing_chunk(const ResponseContext& c, const std::string& finish_reason) {
  Json out = base(c, true);
  Json choice = {{"index", 0}};
  if (is_chat(c)) {
    choice["delta"] = Json::object();
  } else {
    choice["text"] = "";
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_value(finish_reason);
  out["choices"] = Json::array({choice});
  return out;
}

Json usage_chunk(const ResponseContext& c, const JobUsage& usage) {
  Json out = base(c, true);
  out["choices"] = Json::array();
  out["usage"] = usage_json(usage);
  return out;
}

std::string sse_event(const Json& data) { return "data: " + json_text(data) + "\n\n"; }

}  // namespace ox::server
