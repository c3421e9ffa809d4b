// The table of request fields and their readers: every field's type and range is checked here, and
// an error names the field (OpenAI's "param").
#include "native/server/params.h"

#include <cmath>
#include <limits>

#include "core/base/status.h"
#include "core/sampler/json_params.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;
constexpr unsigned kChat = static_cast<unsigned>(Endpoint::kChat);
constexpr unsigned kCompletion = static_cast<unsigned>(Endpoint::kCompletion);
constexpr unsigned kBoth = kChat | kCompletion;
constexpr size_t kMaxStops = 16;

const char* type_name(const Json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  return v.is_string() ? "a string" : v.is_boolean() ? "a boolean" : v.is_array() ? "an array" : v.is_object() ? "an object" : "null";
}

bool wrong_type(const char* name, const char* want, const Json& v, ApiError* e) {
  *e = bad_param(name, "invalid_type", strfmt("'%s' must be %s, not %s", name, want, type_name(v)));
  return false;
}

bool out_of_range(const char* name, std::string what, ApiError* e) {
  *e = bad_param(name, "invalid_value", strfmt("'%s' %s", name, what.c_str()));
  return false;
}

bool integer(const Json& v, const char* name, int64_t lo, int64_t hi, std::optional<int64_t>* out, ApiError* e) {
  if (!v.is_number_integer()) return wrong_type(name, "an integer", v, e);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return out_of_range(name, strfmt("must be between %lld and %lld", static_cast<long long>(lo), static_cast<long long>(hi)), e);
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    return out_of_range(name, strfmt("must be between %lld and %lld", static_cast<long long>(lo), static_cast<long long>(hi)), e);
  }
  *out = x;
  return true;
}

bool boolean(const Json& v, const char* name, bool* out, ApiError* e) {
  if (!v.is_boolean()) return wrong_type(name, "a boolean", v, e);
  *out = v.get<bool>();
  return true;
}

// "Only the neutral value" fields: accepted where they change nothing, refused otherwise.
bool only_value(const Json& v, const char* name, const Json& neutral, const char* why, ApiError* e) {
  if (v == neutral) return true;
  *e = bad_param(name, "unsupported_parameter", strfmt("'%s' is not supported yet (%s); only %s is accepted", name, why,
                                                       json_text(neutral).c_str()));
  return false;
}

bool text_content(const Json& content, const std::string& where, std::string* out, ApiError* e) {
  if (content.is_string()) {
    *out = content.get<std::string>();
    return true;
  }
  if (content.is_null()) {
    out->clear();
    return true;
  }
  if (!content.is_array()) return wrong_type(where.c_str(), "a string or an array of text parts", content, e);
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = strfmt("%s[%zu]", where.c_str(), i);
    if (!part.is_object()) return wrong_type(at.c_str(), "an object", part, e);
    const auto type = part.find("type");
    const auto text = part.find("text");
    if (type == part.end() || !type->is_string() || type->get<std::string>() != "text") {
      *e = bad_param(at + ".type", "unsupported_parameter", strfmt("'%s.type' must be \"text\" (only text parts are supported)", at.c_str()));
      return false;
    }
    if (text == part.end() || !text->is_string()) {
      return wrong_type((at + ".text").c_str(), "a string", text == part.end() ? Json() : *text, e);
    }
    for (const auto& [key, value] : part.items()) {
      if (key != "type" && key != "text") {
        *e = bad_param(at + "." + key, "unknown_parameter", strfmt("unknown parameter '%s.%s'", at.c_str(), key.c_str()));
        return false;
      }
    }
    *out += text->get<std::string>();
  }
  return true;
}

// An assistant turn's tool_calls: [{id, type: "function", function: {name, arguments: JSON text}}].
bool read_tool_calls(const Json& v, const std::string& at, Json* out, ApiError* e) {
  if (!v.is_array()) return wrong_type(at.c_str(), "an array of tool calls", v, e);
  for (size_t k = 0; k < v.size(); ++k) {
    const Json& c = v[k];
    const std::string ck = strfmt("%s[%zu]", at.c_str(), k);
    if (!c.is_object()) return wrong_type(ck.c_str(), "an object", c, e);
    for (const auto& [key, value] : c.items()) {
      if (key != "id" && key != "type" && key != "function") {
        *e = bad_param(ck + "." + key, "unknown_parameter", strfmt("unknown parameter '%s.%s'", ck.c_str(), key.c_str()));
        return false;
      }
    }
    const auto id = c.find("id");
    if (id != c.end() && !id->is_string()) return wrong_type((ck + ".id").c_str(), "a string", *id, e);
    const auto type = c.find("type");
    if (type != c.end() && *type != "function") {
      *e = bad_param(ck + ".type", "invalid_value", strfmt("'%s.type' must be \"function\"", ck.c_str()));
      return false;
    }
    const auto fn = c.find("function");
    if (fn == c.end() || !fn->is_object()) return wrong_type((ck + ".function").c_str(), "an object", fn == c.end() ? Json() : *fn, e);
    const auto name = fn->find("name");
    if (name == fn->end() || !name->is_string()) {
      return wrong_type((ck + ".function.name").c_str(), "a string", name == fn->end() ? Json() : *name, e);
    }
    const auto args = fn->find("arguments");
    if (args == fn->end() || !args->is_string()) {
      return wrong_type((ck + ".function.arguments").c_str(), "a string (JSON text)", args == fn->end() ? Json() : *args, e);
    }
    if (Json::parse(args->get<std::string>(), nullptr, false).is_discarded()) {
      *e = bad_param(ck + ".function.arguments", "invalid_value", strfmt("'%s.function.arguments' is not valid JSON", ck.c_str()));
      return false;
    }
    Json call = {{"id", id != c.end() ? id->get<std::string>() : std::string()}, {"type", "function"},
                 {"function", {{"name", *name}, {"arguments", *args}}}};
    out->push_back(std::move(call));
  }
  return true;
}

bool read_messages(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_array()) return wrong_type(name, "an array of messages", v, e);
  if (v.empty()) return out_of_range(name, "must hold at least one message", e);
  r->messages = Json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& m = v[i];
    const std::string at = strfmt("messages[%zu]", i);
    if (!m.is_object()) return wrong_type(at.c_str(), "an object", m, e);
    std::string role, content, tool_call_id;
    bool has_role = false, has_tool_call_id = false;
    Json tool_calls;
    for (const auto& [key, value] : m.items()) {
      if (key == "role") {
        if (!value.is_string()) return wrong_type((at + ".role").c_str(), "a string", value, e);
        role = value.get<std::string>();
        has_role = true;
      } else if (key == "content") {
        if (!text_content(value, at + ".content", &content, e)) return false;
      } else if (key == "tool_calls") {
        if (value.is_null()) continue;
        tool_calls = Json::array();
        if (!read_tool_calls(value, at + ".tool_calls", &tool_calls, e)) return false;
      } else if (key == "tool_call_id") {
        if (!value.is_string()) return wrong_type((at + ".tool_call_id").c_str(), "a string", value, e);
        tool_call_id = value.get<std::string>();
        has_tool_call_id = true;
      } else {
        *e = bad_param(at + "." + key, "unknown_parameter",
                       strfmt("unknown or unsupported parameter '%s.%s'", at.c_str(), key.c_str()));
        return false;
      }
    }
    if (!has_role) return out_of_range((at + ".role").c_str(), "is required", e);
    if (role != "system" && role != "user" && role != "assistant" && role != "developer" && role != "tool") {
      *e = bad_param(at + ".role", "invalid_value",
                     strfmt("'%s.role' must be system, developer, user, assistant or tool, not '%s'", at.c_str(), role.c_str()));
      return false;
    }
    if (!tool_calls.is_null() && role != "assistant") {
      *e = bad_param(at + ".tool_calls", "invalid_value", strfmt("'%s.tool_calls' is only allowed on assistant messages", at.c_str()));
      return false;
    }
    if (has_tool_call_id != (role == "tool")) {
      *e = bad_param(at + ".tool_call_id", "invalid_value",
                     strfmt(role == "tool" ? "'%s.tool_call_id' is required on tool messages"
                                           : "'%s.tool_call_id' is only allowed on tool messages",
                            at.c_str()));
      return false;
    }
    // Templates know "system"; OpenAI's newer "developer" role means the same.
    if (role == "developer") role = "system";
    Json out = {{"role", role}, {"content", content}};
    if (!tool_calls.is_null()) out["tool_calls"] = std::move(tool_calls);
    if (has_tool_call_id) out["tool_call_id"] = tool_call_id;
    r->messages.push_back(std::move(out));
  }
  return true;
}

bool read_tools(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_array()) return wrong_type(name, "an array of function tools", v, e);
  if (v.empty()) return out_of_range(name, "must hold at least one tool", e);
  if (const Status st = check_tools(v); !st.is_ok()) {
    // check_tools names the element ("tools[0].function.name: ..."): that is the param.
    const std::string& m = st.message();
    *e = bad_param(m.substr(0, m.find(':')), "invalid_value", m);
    return false;
  }
  r->tools.tools = v;
  return true;
}

bool read_tool_choice(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_string() && !v.is_object()) return wrong_type(name, "a string or an object", v, e);
  Result<chat::ToolChoice> c = chat::parse_tool_choice(nlohmann::json::parse(v.dump()));
  if (!c.ok()) {
    *e = bad_param(name, "invalid_value", c.status().message());
    return false;
  }
  r->tools.choice = std::move(c).value();
  return true;
}

bool read_prompt(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (v.is_string()) {
    r->prompt_text = v.get<std::string>();
    return true;
  }
  if (!v.is_array()) return wrong_type(name, "a string or an array of token ids", v, e);
  if (v.size() == 1 && v[0].is_string()) {  // one prompt in a list
    r->prompt_text = v[0].get<std::string>();
    return true;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_string()) {
      *e = bad_param(name, "unsupported_parameter", "several prompts in one request are not supported (send one each)");
      return false;
    }
    std::optional<int64_t> id;
    if (!integer(v[i], strfmt("prompt[%zu]", i).c_str(), 0, std::numeric_limits<int32_t>::max(), &id, e)) {
      e->param = name;
      return false;
    }
    r->prompt_ids.push_back(static_cast<int32_t>(*id));
  }
  r->has_prompt_ids = true;
  return true;
}

bool read_stop(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (v.is_string()) {
    r->stop = {v.get<std::string>()};
    return true;
  }
  if (!v.is_array()) return wrong_type(name, "a string or an array of strings", v, e);
  if (v.size() > kMaxStops) return out_of_range(name, strfmt("holds at most %zu strings", kMaxStops), e);
  r->stop.clear();
  for (const Json& s : v) {
    if (!s.is_string()) return wrong_type(name, "an array of strings", v, e);
    r->stop.push_back(s.get<std::string>());
  }
  return true;
}

constexpr int64_t kMaxTopLogprobs = 20;  // OpenAI's limit

bool read_max_tokens(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  std::optional<int64_t> n;
  if (!integer(v, name, 1, std::numeric_limits<int32_t>::max(), &n, e)) return false;
  r->max_tokens = *n;
  return true;
}

bool read_choices(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  std::optional<int64_t> n;
  if (!integer(v, name, 1, kMaxChoices, &n, e)) return false;
  r->n_choices = static_cast<int>(*n);
  return true;
}

// chat: a boolean (with top_logprobs beside it); completions: the legacy count of alternatives.
bool read_logprobs(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (r->endpoint == Endpoint::kChat) return boolean(v, name, &r->logprobs, e);
  std::optional<int64_t> n;
  if (!integer(v, name, 0, kMaxTopLogprobs, &n, e)) return false;
  r->logprobs = true;
  r->top_logprobs = static_cast<int>(*n);
  return true;
}

bool read_top_logprobs(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  std::optional<int64_t> n;
  if (!integer(v, name, 0, kMaxTopLogprobs, &n, e)) return false;
  r->top_logprobs = static_cast<int>(*n);
  r->has_top_logprobs = true;
  return true;
}

bool read_stream_options(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_object()) return wrong_type(name, "an object", v, e);
  for (const auto& [key, value] : v.items()) {
    const std::string at = std::string(name) + "." + key;
    if (key != "include_usage") {
      *e = bad_param(at, "unknown_parameter", strfmt("unknown or unsupported parameter '%s'", at.c_str()));
      return false;
    }
    if (!value.is_null() && !boolean(value, at.c_str(), &r->include_usage, e)) return false;
  }
  return true;
}

bool set_constraint(CompletionRequest* r, OutputConstraint::Kind kind, std::string text, const char* name, ApiError* e) {
  if (r->constraint.kind != OutputConstraint::Kind::kNone) {
    *e = bad_param(name, "invalid_value", "give one of response_format, grammar and json_schema");
    return false;
  }
  r->constraint = {kind, std::move(text)};
  return true;
}

// response_format: {type: text | json_object [, schema] | json_schema, json_schema: {schema}}.
bool read_response_format(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_object()) return wrong_type(name, "an object", v, e);
  const auto type = v.find("type");
  if (type == v.end() || !type->is_string()) return wrong_type("response_format.type", "a string", type == v.end() ? Json() : *type, e);
  const std::string t = type->get<std::string>();
  if (t == "text") return true;
  if (t == "json_object") {
    const auto schema = v.find("schema");
    return set_constraint(r, OutputConstraint::Kind::kJsonSchema, schema == v.end() ? "" : json_text(*schema), name, e);
  }
  if (t == "json_schema") {
    const auto spec = v.find("json_schema");
    if (spec == v.end() || !spec->is_object() || !spec->contains("schema") || !(*spec)["schema"].is_object()) {
      *e = bad_param("response_format.json_schema.schema", "invalid_type", "'response_format.json_schema.schema' must be an object");
      return false;
    }
    return set_constraint(r, OutputConstraint::Kind::kJsonSchema, json_text((*spec)["schema"]), name, e);
  }
  *e = bad_param("response_format.type", "invalid_value",
                 strfmt("'response_format.type' must be text, json_object or json_schema, not '%s'", t.c_str()));
  return false;
}

bool read_grammar(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_string()) return wrong_type(name, "a string", v, e);
  return set_constraint(r, OutputConstraint::Kind::kGrammar, v.get<std::string>(), name, e);
}

bool read_json_schema(const Json& v, const char* name, CompletionRequest* r, ApiError* e) {
  if (!v.is_object()) return wrong_type(name, "an object", v, e);
  return set_constraint(r, OutputConstraint::Kind::kJsonSchema, json_text(v), name, e);
}

// validate()'s message names the CLI flag ("--top-p: 2 is out of range"): the same error in the
// request's terms ("'top_p': 2 is out of range"), naming the field.
ApiError sampler_error(const std::string& message) {
  for (const ParamDef& d : sampler_params()) {
    const std::string flag = std::string(d.names[0]) + ":";
    if (d.key[0] != '\0' && !d.names[0].empty() && message.rfind(flag, 0) == 0) {
      return bad_param(d.key, "invalid_value", strfmt("'%s':%s", d.key, message.substr(flag.size()).c_str()));
    }
  }
  return bad_param("", "invalid_value", message);
}

using Reader = bool (*)(const Json& v, const char* name, CompletionRequest* r, ApiError* e);

struct Field {
  FieldInfo info;
  Reader read;  // nullptr: not implemented (refused whenever present and not null)
};

// Every field a client may send. To implement one: give it a reader (and map it in
// sampling_params.cpp if it is a sampler setting).
const Field kFields[] = {
    {{"messages", kChat, true, "required; roles system/developer/user/assistant/tool, text content, tool_calls"}, read_messages},
    {{"prompt", kCompletion, true, "required; a string or token ids"}, read_prompt},
    {{"model", kBoth, true, "any name: the server has one model"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) {
       if (!v.is_string()) return wrong_type(n, "a string", v, e);
       r->model = v.get<std::string>();
       return true;
     }},
    {{"stream", kBoth, true, "server-sent events"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) { return boolean(v, n, &r->stream, e); }},
    {{"stream_options", kBoth, true, "include_usage"}, read_stream_options},
    {{"max_tokens", kBoth, true, ">= 1; prompt + max_tokens must fit a slot"}, read_max_tokens},
    {{"max_completion_tokens", kChat, true, "as max_tokens"}, read_max_tokens},
    {{"stop", kBoth, true, "a string or up to 16 strings"}, read_stop},
    {{"ignore_eos", kBoth, true, "llama.cpp"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) { return boolean(v, n, &r->ignore_eos, e); }},
    {{"user", kBoth, true, "a string; not used"},
     [](const Json& v, const char* n, CompletionRequest*, ApiError* e) { return v.is_string() || wrong_type(n, "a string", v, e); }},
    {{"n", kBoth, true, "choices, 1 to the server's slots (-np); each sampled on its own (seed + index)"}, read_choices},
    {{"n_keep", kBoth, true, "llama.cpp: prompt tokens a context shift keeps after BOS (-1: all)"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) {
       std::optional<int64_t> k;
       if (!integer(v, n, -1, std::numeric_limits<int32_t>::max(), &k, e)) return false;
       r->n_keep = static_cast<int>(*k);
       return true;
     }},
    {{"n_discard", kBoth, true, "llama.cpp: tokens a context shift drops (0: half of what follows n_keep)"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) {
       std::optional<int64_t> k;
       if (!integer(v, n, 0, std::numeric_limits<int32_t>::max(), &k, e)) return false;
       r->n_discard = static_cast<int>(*k);
       return true;
     }},
    {{"logprobs", kBoth, true, "chat: a boolean; completions: 0 to 20 alternatives (softmax of the raw logits)"}, read_logprobs},
    {{"top_logprobs", kChat, true, "0 to 20, with logprobs: true"}, read_top_logprobs},
    {{"echo", kCompletion, true, "only false"},
     [](const Json& v, const char* n, CompletionRequest*, ApiError* e) { return only_value(v, n, false, "echoing the prompt", e); }},
    {{"response_format", kBoth, true, "text, json_object (optional schema), json_schema"}, read_response_format},
    {{"grammar", kBoth, true, "llama.cpp's GBNF (llama-server)"}, read_grammar},
    {{"json_schema", kBoth, true, "a JSON Schema (llama-server)"}, read_json_schema},
    {{"tools", kChat, true, "function tools, through the chat template"}, read_tools},
    {{"tool_choice", kChat, true, "auto, none, required or {type: function, function: {name}}"}, read_tool_choice},
    {{"parallel_tool_calls", kChat, true, "a boolean (default true)"},
     [](const Json& v, const char* n, CompletionRequest* r, ApiError* e) { return boolean(v, n, &r->tools.parallel_tool_calls, e); }},
    // Not implemented yet: refused by name.
    {{"n_probs", kBoth, false, "llama-server's own shape: use logprobs / top_logprobs"}, nullptr},
    {{"functions", kChat, false, "deprecated by OpenAI: use tools"}, nullptr},
    {{"function_call", kChat, false, "deprecated by OpenAI: use tool_choice"}, nullptr},
    {{"best_of", kCompletion, false, "one choice per request"}, nullptr},
    {{"suffix", kCompletion, false, "not implemented"}, nullptr},
    {{"modalities", kChat, false, "text only"}, nullptr},
    {{"audio", kChat, false, "text only"}, nullptr},
    {{"prediction", kChat, false, "not implemented"}, nullptr},
    {{"reasoning_effort", kChat, false, "not implemented"}, nullptr},
    {{"service_tier", kBoth, false, "not implemented"}, nullptr},
    {{"store", kChat, false, "not implemented"}, nullptr},
    {{"metadata", kChat, false, "not implemented"}, nullptr},
    {{"web_search_options", kChat, false, "not implemented"}, nullptr},
};

const Field* find_field(std::string_view name) {
  for (const Field& f : kFields) {
    if (name == f.info.name) return &f;
  }
  return nullptr;
}

}  // namespace

std::span<const FieldInfo> request_fields() {
  static const std::vector<FieldInfo> infos = [] {
    std::vector<FieldInfo> out;
    for (const Field& f : kFields) out.push_back(f.info);
    return out;
  }();
  return infos;
}

bool parse_json_object(std::string_view body, nlohmann::ordered_json* out, ApiError* error) {
  *out = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {
    *error = bad_param("", "invalid_json",
                       "the request body is not valid JSON (or holds invalid UTF-8)");
    return false;
  }
  if (!out->is_object()) {
    *error = bad_param("", "invalid_type", strfmt("the request body must be a JSON object, not %s", type_name(*out)));
    return false;
  }
  return true;
}

bool parse_completion_request(std::string_view body, Endpoint endpoint, CompletionRequest* out, ApiError* error) {
  Json j;
  if (!parse_json_object(body, &j, error)) return false;
  *out = CompletionRequest{};
  out->endpoint = endpoint;
  const unsigned bit = static_cast<unsigned>(endpoint);
  for (const auto& [key, value] : j.items()) {
    // The sampler's fields, from its registry (core/sampler/json_params.h).
    if (const ParamDef* d = find_json_param(key); d != nullptr && find_field(key) == nullptr) {
      if (value.is_null()) continue;
      const Status st = set_param_json(out->sampling, *d, value);
      if (!st.is_ok()) {
        *error = bad_param(key, "invalid_value", st.message());
        return false;
      }
      continue;
    }
    const Field* f = find_field(key);
    if (f == nullptr || (f->info.endpoints & bit) == 0) {
      *error = bad_param(key, "unknown_parameter", strfmt("unknown parameter '%s'", key.c_str()));
      return false;
    }
    if (value.is_null()) continue;  // null is absent, as OpenAI reads it
    if (f->read == nullptr) {
      *error = bad_param(key, "unsupported_parameter",
                         strfmt("'%s' is not supported yet (%s)", key.c_str(), f->info.note));
      return false;
    }
    if (!f->read(value, f->info.name, out, error)) return false;
  }
  const char* required = endpoint == Endpoint::kChat ? "messages" : "prompt";
  const auto it = j.find(required);
  if (it == j.end() || it->is_null()) {
    *error = bad_param(required, "missing_required_parameter", strfmt("'%s' is required", required));
    return false;
  }
  if (!out->stream && j.contains("stream_options") && !j["stream_options"].is_null()) {
    *error = bad_param("stream_options", "invalid_value", "'stream_options' is only allowed with \"stream\": true");
    return false;
  }
  const auto choice = j.find("tool_choice");
  if (choice != j.end() && !choice->is_null() && !out->tools.active() &&
      (out->tools.choice.mode == chat::ToolChoice::Mode::kRequired || out->tools.choice.mode == chat::ToolChoice::Mode::kNamed)) {
    *error = bad_param("tool_choice", "invalid_value", "'tool_choice' requires 'tools' with at least one function");
    return false;
  }
  if (out->tools.active() && out->tools.choice.mode != chat::ToolChoice::Mode::kNone &&
      out->constraint.kind != OutputConstraint::Kind::kNone) {
    *error = bad_param("tools", "invalid_value",
                       "'tools' (with tool_choice other than \"none\") cannot be combined with response_format, grammar or json_schema");
    return false;
  }
  if (out->has_top_logprobs && !out->logprobs) {  // llama-server's rule
    *error = bad_param("top_logprobs", "invalid_value", "'top_logprobs' requires \"logprobs\": true");
    return false;
  }
  if (out->logprobs) out->sampling.n_probs = std::max(out->top_logprobs, 1);  // 1: the chosen token's own
  if (const Status st = validate(out->sampling); !st.is_ok()) {
    *error = sampler_error(st.message());
    return false;
  }
  return true;
}

}  // namespace ox::server
