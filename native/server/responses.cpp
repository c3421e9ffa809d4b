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

Json chunk_with(const ResponseContext& c, int index, const char* key, Json value, Json logprobs = nullptr) {
  Json out = base(c, true);
  Json choice = {{"index", index}};
  choice[key] = std::move(value);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = nullptr;
  out["choices"] = Json::array({choice});
  return out;
}

}  // namespace

Json text_choice(const ResponseContext& c, int index, const std::string& text, const std::string& finish_reason,
                 Json logprobs) {
  if (is_chat(c)) return message_choice(index, {{"role", "assistant"}, {"content", text}}, finish_reason, std::move(logprobs));
  Json choice = {{"index", index}, {"text", text}};
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_value(finish_reason);
  return choice;
}

Json message_choice(int index, Json message, const std::string& finish_reason, Json logprobs) {
  Json choice = {{"index", index}, {"message", std::move(message)}};
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_value(finish_reason);
  return choice;
}

Json full_response(const ResponseContext& c, Json choices, const JobUsage& usage) {
  Json out = base(c, false);
  out["choices"] = std::move(choices);
  out["usage"] = usage_json(usage);
  return out;
}

Json opening_chunk(const ResponseContext& c, int index) {
  if (is_chat(c)) return chunk_with(c, index, "delta", {{"role", "assistant"}, {"content", ""}});
  return chunk_with(c, index, "text", "");
}

Json text_chunk(const ResponseContext& c, int index, std::string_view text, Json logprobs) {
  if (is_chat(c)) return chunk_with(c, index, "delta", {{"content", text}}, std::move(logprobs));
  return chunk_with(c, index, "text", text, std::move(logprobs));
}

Json delta_chunk(const ResponseContext& c, int index, Json delta) { return chunk_with(c, index, "delta", std::move(delta)); }

Json closing_chunk(const ResponseContext& c, int index, const std::string& finish_reason) {
  Json out = base(c, true);
  Json choice = {{"index", index}};
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
