// parse_assistant_output's driver (reasoning, then the format's body parser), the helpers the
// per-format parsers share, tool-call ids and OpenAI streaming deltas.
#include "core/chat/tool_parse.h"

#include <algorithm>

#include "core/chat/tool_parse_detail.h"

namespace ox::chat {
namespace detail {

JsonScan expect_literal(std::string_view text, size_t* pos, std::string_view lit) {
  const std::string_view rest = text.substr(std::min(*pos, text.size()));
  if (rest.substr(0, lit.size()) == lit) {
    *pos += lit.size();
    return JsonScan::kComplete;
  }
  return rest.size() < lit.size() && lit.substr(0, rest.size()) == rest ? JsonScan::kIncomplete : JsonScan::kInvalid;
}

JsonScan expect_any(std::string_view text, size_t* pos, std::initializer_list<std::string_view> lits, size_t* which) {
  size_t i = 0;
  for (std::string_view lit : lits) {
    size_t p = *pos;
    const JsonScan s = expect_literal(text, &p, lit);
    if (s == JsonScan::kComplete) {
      *pos = p;
      *which = i;
      return s;
    }
    if (s == JsonScan::kIncomplete) return s;  // an earlier (preferred) literal may still come
    ++i;
  }
  return JsonScan::kInvalid;
}

JsonScan close_tag(const Ctx& ctx, size_t* pos, std::string_view lit) {
  const JsonScan s = expect_literal(ctx.text, pos, lit);
  if (s == JsonScan::kIncomplete && !ctx.partial) {
    *pos = ctx.text.size();
    return JsonScan::kComplete;
  }
  return s;
}

MarkerHit find_marker(const Ctx& ctx, size_t pos, std::span<const std::string_view> markers) {
  MarkerHit hit;
  for (size_t i = 0; i < markers.size(); ++i) {
    const size_t at = ctx.text.find(markers[i], pos);
    if (at != std::string_view::npos && (!hit.found || at < hit.pos)) hit = {true, false, at, i};
  }
  if (hit.found || !ctx.partial) return hit;
  const std::string_view rest = ctx.text.substr(pos);
  for (size_t i = 0; i < markers.size(); ++i) {
    const size_t n = partial_marker_suffix(rest, markers[i]);
    if (n > 0 && (!hit.found || ctx.text.size() - n < hit.pos)) hit = {true, true, ctx.text.size() - n, i};
  }
  return hit;
}

namespace {

// A JSON value's text as tool-call arguments: a string holding JSON (some models quote their
// arguments) is unwrapped; anything else loses its whitespace.
bool arguments_text(std::string_view raw, const JsonSpan& span, std::string* out) {
  if (!raw.empty() && raw.front() == '"') {
    if (span.state != JsonScan::kComplete || !decode_json_string(raw, out)) return false;
    return !nlohmann::json::parse(*out, nullptr, false).is_discarded();  // the string must hold JSON
  }
  *out = minify_json(raw);
  return true;
}

}  // namespace

JsonScan scan_call_object(std::string_view text, size_t pos, const CallKeys& keys, size_t* end, ToolCall* call, bool* named) {
  *named = false;
  const JsonObjectScan o = scan_json_object(text, pos);
  *end = o.end;
  if (o.state == JsonScan::kInvalid) return o.state;
  const JsonMember* name = o.find(keys.name);
  const JsonMember* args = o.find(keys.args);
  if (args == nullptr && !keys.args_alt.empty()) args = o.find(keys.args_alt);
  const JsonMember* id = keys.id.empty() ? nullptr : o.find(keys.id);
  if (name != nullptr && name->value.state == JsonScan::kComplete) {
    const std::string_view lit = text.substr(name->value_begin, name->value.end - name->value_begin);
    if (!decode_json_string(lit, &call->name) || call->name.empty()) return JsonScan::kInvalid;
    *named = true;
  }
  if (id != nullptr && id->value.state == JsonScan::kComplete) {
    std::string s;
    if (decode_json_string(text.substr(id->value_begin, id->value.end - id->value_begin), &s)) call->id = s;
  }
  if (args != nullptr) {
    const size_t args_end = args->value.state == JsonScan::kComplete ? args->value.end : text.size();
    if (!arguments_text(text.substr(args->value_begin, args_end - args->value_begin), args->value, &call->arguments)) {
      if (o.state == JsonScan::kComplete) return JsonScan::kInvalid;
      call->arguments.clear();
    }
  }
  if (o.state == JsonScan::kComplete) {
    if (!*named || args == nullptr) return JsonScan::kInvalid;
    if (args->value_begin < text.size() && text[args->value_begin] != '{' && text[args->value_begin] != '"') {
      return JsonScan::kInvalid;  // arguments must be an object
    }
  }
  return o.state;
}

JsonScan scan_call_array(std::string_view text, size_t pos, const CallKeys& keys, size_t* end, std::vector<ToolCall>* calls) {
  size_t i = pos;
  const JsonScan open = expect_literal(text, &i, "[");
  if (open != JsonScan::kComplete) return open;
  i = skip_json_ws(text, i);
  if (i < text.size() && text[i] == ']') {
    *end = i + 1;
    return JsonScan::kComplete;
  }
  while (true) {
    if (i >= text.size()) return JsonScan::kIncomplete;
    ToolCall call;
    bool named = false;
    size_t obj_end = i;
    const JsonScan s = scan_call_object(text, i, keys, &obj_end, &call, &named);
    if (s == JsonScan::kInvalid) return s;
    if (named) calls->push_back(std::move(call));
    if (s == JsonScan::kIncomplete) return s;
    i = skip_json_ws(text, obj_end);
    if (i >= text.size()) return JsonScan::kIncomplete;
    if (text[i] == ']') {
      *end = i + 1;
      return JsonScan::kComplete;
    }
    if (text[i] != ',') return JsonScan::kInvalid;
    i = skip_json_ws(text, i + 1);
  }
}

size_t incomplete_utf8_tail(std::string_view s) {
  for (size_t n = 1; n <= 3 && n <= s.size(); ++n) {
    const unsigned char c = static_cast<unsigned char>(s[s.size() - n]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return len > n ? n : 0;
  }
  return 0;
}

void rstrip(std::string* s) {
  while (!s->empty() && (s->back() == ' ' || s->back() == '\n' || s->back() == '\t' || s->back() == '\r')) s->pop_back();
}

void parse_marked_blocks(const Ctx& ctx, std::span<const std::string_view> markers, BlockParser block, ParsedMessage* msg) {
  size_t pos = 0;
  while (pos <= ctx.text.size()) {
    const MarkerHit hit = find_marker(ctx, pos, markers);
    if (!hit.found) {
      msg->content += ctx.text.substr(pos);
      return;
    }
    msg->content += ctx.text.substr(pos, hit.pos - pos);
    if (hit.partial) return;  // held back: the marker may be on its way
    const std::string_view marker = markers[hit.index];
    size_t p = hit.pos + marker.size();
    std::vector<ToolCall> calls;
    const JsonScan s = block(ctx, &p, hit.index, &calls);
    if (s == JsonScan::kInvalid || (s == JsonScan::kIncomplete && !ctx.partial)) {
      msg->content += marker;  // not a call after all: the marker is text
      pos = hit.pos + marker.size();
      continue;
    }
    rstrip(&msg->content);
    for (ToolCall& c : calls) msg->tool_calls.push_back(std::move(c));
    if (s == JsonScan::kIncomplete) return;
    pos = skip_json_ws(ctx.text, p);
  }
}

std::string json_quote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string xml_value_to_json(const Ctx& ctx, std::string_view tool, std::string_view key, std::string_view value) {
  const nlohmann::json* tools = ctx.options->tools;
  if (tools != nullptr && tools->is_array()) {
    for (const nlohmann::json& t : *tools) {
      const nlohmann::json* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
      if (fn == nullptr || !fn->is_object() || !fn->contains("name") || (*fn)["name"] != tool) continue;
      const nlohmann::json* props = fn->contains("parameters") && (*fn)["parameters"].is_object() &&
                                            (*fn)["parameters"].contains("properties")
                                        ? &(*fn)["parameters"]["properties"]
                                        : nullptr;
      if (props != nullptr && props->is_object() && props->contains(std::string(key))) {
        const nlohmann::json& p = (*props)[std::string(key)];
        if (p.is_object() && p.contains("type") && p["type"] == "string") return json_quote(value);
      }
    }
  }
  const nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (!j.is_discarded()) return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return json_quote(value);
}

void strip_wrapper(const Ctx& ctx, std::string_view open, std::string_view close, std::string* content) {
  if (ctx.partial && content->size() < open.size() && open.substr(0, content->size()) == *content) {
    content->clear();  // maybe the opening tag
    return;
  }
  if (content->compare(0, open.size(), open) == 0) {
    content->erase(0, open.size());
    while (!content->empty() && (content->front() == '\n' || content->front() == ' ')) content->erase(0, 1);
  }
  if (content->size() >= close.size() && content->compare(content->size() - close.size(), close.size(), close) == 0) {
    content->resize(content->size() - close.size());
  } else if (ctx.partial) {
    content->resize(content->size() - partial_marker_suffix(*content, close));
  }
}

namespace {

// How each format's reply is read: a parser of its own, or content split at the registry's
// tool_call_markers into blocks (and an optional wrapper around the content).
struct FormatParser {
  ChatFormat format;
  BodyParser body;
  BlockParser block;
  std::string_view wrap_open;
  std::string_view wrap_close;
};

constexpr FormatParser kParsers[] = {
    {ChatFormat::kHermes, nullptr, hermes_block, {}, {}},
    {ChatFormat::kQwen3Coder, nullptr, qwen3_coder_block, {}, {}},
    {ChatFormat::kGlm45, nullptr, glm_block, {}, {}},
    {ChatFormat::kMistralNemo, nullptr, mistral_block, {}, {}},
    {ChatFormat::kGranite, nullptr, granite_block, "<response>", "</response>"},
    {ChatFormat::kCommandR, nullptr, command_r_block, "<|START_RESPONSE|>", "<|END_RESPONSE|>"},
    {ChatFormat::kDeepSeekR1, nullptr, deepseek_block, {}, {}},
    {ChatFormat::kKimiK2, nullptr, kimi_block, {}, {}},
    {ChatFormat::kLfm2, nullptr, lfm2_block, {}, {}},
    {ChatFormat::kGemma4, nullptr, gemma4_block, {}, {}},
    {ChatFormat::kLlama3, parse_llama3, nullptr, {}, {}},
    {ChatFormat::kFunctionaryV32, parse_functionary, nullptr, {}, {}},
    {ChatFormat::kGptOss, parse_gpt_oss, nullptr, {}, {}},
    {ChatFormat::kGeneric, parse_generic, nullptr, {}, {}},
};

}  // namespace

// The reply after reasoning into content and tool calls (false: the format has no tool syntax).
bool parse_body(ChatFormat format, const Ctx& ctx, ParsedMessage* msg) {
  for (const FormatParser& f : kParsers) {
    if (f.format != format) continue;
    if (f.body != nullptr) {
      f.body(ctx, msg);
      return true;
    }
    parse_marked_blocks(ctx, chat_format_def(format).tool_call_markers, f.block, msg);
    if (!f.wrap_open.empty()) strip_wrapper(ctx, f.wrap_open, f.wrap_close, &msg->content);
    return true;
  }
  return false;
}

}  // namespace detail

Result<ParsedMessage> parse_assistant_output(ChatFormat format, std::string_view text, bool is_partial,
                                             const ParseOptions& options) {
  const ChatFormatDef& def = chat_format_def(format);
  ParsedMessage msg;
  size_t begin = 0;
  if (options.reasoning_format == ReasoningFormat::kDeepSeek && !def.reasoning.start.empty()) {
    ReasoningSplit r = split_reasoning(text, def.reasoning, options.thinking_forced_open, is_partial);
    msg.reasoning_content = std::move(r.reasoning);
    begin = r.content_begin;
  }
  const detail::Ctx ctx{text.substr(begin), is_partial, &options};
  if (options.parse_tool_calls && detail::parse_body(format, ctx, &msg)) {
    // parsed
  } else if (format == ChatFormat::kGptOss) {
    detail::parse_gpt_oss(ctx, &msg);  // its channels are not tool syntax: always parsed
    msg.tool_calls.clear();
  } else {
    msg.content = std::string(ctx.text);
  }
  if (is_partial) {
    detail::rstrip(&msg.content);
    detail::rstrip(&msg.reasoning_content);
    // A character whose last bytes are still to come is held back: deltas stay valid UTF-8.
    for (std::string* s : {&msg.content, &msg.reasoning_content}) s->resize(s->size() - detail::incomplete_utf8_tail(*s));
    for (ToolCall& c : msg.tool_calls) c.arguments.resize(c.arguments.size() - detail::incomplete_utf8_tail(c.arguments));
  }
  return msg;
}

nlohmann::ordered_json ParsedMessage::to_json() const {
  nlohmann::ordered_json j;
  j["role"] = "assistant";
  if (content.empty() && !tool_calls.empty()) {
    j["content"] = nullptr;
  } else {
    j["content"] = content;
  }
  if (!reasoning_content.empty()) j["reasoning_content"] = reasoning_content;
  if (!tool_calls.empty()) {
    nlohmann::ordered_json calls = nlohmann::ordered_json::array();
    for (const ToolCall& c : tool_calls) {
      calls.push_back({{"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}, {"id", c.id}});
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

void assign_tool_call_ids(ParsedMessage* msg, std::vector<std::string>* ids, const std::function<std::string()>& generate) {
  for (size_t i = 0; i < msg->tool_calls.size(); ++i) {
    if (ids->size() <= i) ids->push_back(msg->tool_calls[i].id.empty() ? generate() : msg->tool_calls[i].id);
    msg->tool_calls[i].id = (*ids)[i];
  }
}

std::string random_tool_call_id(ChatFormat format, uint64_t* rng_state) {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const size_t n = format == ChatFormat::kMistralNemo ? 9 : 32;
  std::string id;
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = (*rng_state += 0x9E3779B97F4A7C15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    id.push_back(kChars[(z ^ (z >> 31)) % kChars.size()]);
  }
  return id;
}

namespace {

// What `next` adds to `prev`; false if it does not extend it.
bool appended(const std::string& prev, const std::string& next, std::string* added) {
  if (next.compare(0, prev.size(), prev) != 0) return false;
  *added = next.substr(prev.size());
  return true;
}

}  // namespace

Result<std::vector<nlohmann::ordered_json>> message_deltas(const ParsedMessage& prev, const ParsedMessage& next) {
  std::vector<nlohmann::ordered_json> out;
  std::string added;
  if (!appended(prev.reasoning_content, next.reasoning_content, &added)) {
    return error(ErrorCode::kInternal, "streamed reasoning_content changed instead of growing");
  }
  if (!added.empty()) out.push_back({{"reasoning_content", added}});
  if (!appended(prev.content, next.content, &added)) return error(ErrorCode::kInternal, "streamed content changed instead of growing");
  if (!added.empty()) out.push_back({{"content", added}});
  if (next.tool_calls.size() < prev.tool_calls.size()) {
    return error(ErrorCode::kInternal, strfmt("streamed tool calls went from %zu to %zu", prev.tool_calls.size(), next.tool_calls.size()));
  }
  for (size_t i = 0; i < next.tool_calls.size(); ++i) {
    const ToolCall& n = next.tool_calls[i];
    nlohmann::ordered_json call;
    if (i < prev.tool_calls.size()) {
      const ToolCall& p = prev.tool_calls[i];
      if (p.name != n.name || !appended(p.arguments, n.arguments, &added)) {
        return error(ErrorCode::kInternal, strfmt("streamed tool call %zu changed instead of growing", i));
      }
      if (added.empty()) continue;
      call = {{"index", i}, {"function", {{"arguments", added}}}};
    } else {
      call = {{"index", i}, {"id", n.id}, {"type", "function"}, {"function", {{"name", n.name}, {"arguments", n.arguments}}}};
    }
    out.push_back({{"tool_calls", nlohmann::ordered_json::array({std::move(call)})}});
  }
  return out;
}

}  // namespace ox::chat
