// Gemma 4's tool calls: <|tool_call>call:NAME{key:VALUE,...}<tool_call|>, whose values are
// <|"|>text<|"|> strings, {key:value} objects with bare keys, [a,b] lists, numbers, true, false,
// null (the syntax llama.cpp's gemma4 PEG parser reads, common/parsers/gemma4.cpp), turned into
// JSON arguments.
#include <string>

#include "core/chat/tool_parse_detail.h"

namespace ox::chat::detail {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kQuote = "<|\"|>";
constexpr int kMaxDepth = 64;  // nesting a model may write; deeper is malformed, not a stack overflow

bool starts_with(std::string_view text, size_t pos, std::string_view lit) { return text.compare(pos, lit.size(), lit) == 0; }

size_t skip_space(std::string_view text, size_t p) {
  while (p < text.size() && (text[p] == ' ' || text[p] == '\n' || text[p] == '\t' || text[p] == '\r')) ++p;
  return p;
}

// kIncomplete when the text ends before the value does.
JsonScan value(std::string_view text, size_t* pos, Json* out, int depth);

// <|"|>text<|"|>: the text verbatim (the format has no escapes).
JsonScan string(std::string_view text, size_t* pos, std::string* out) {
  const size_t begin = *pos + kQuote.size();
  const size_t end = text.find(kQuote, begin);
  if (end == std::string_view::npos) return JsonScan::kIncomplete;
  *out = std::string(text.substr(begin, end - begin));
  *pos = end + kQuote.size();
  return JsonScan::kComplete;
}

// {key:value,...}: keys bare (any bytes but ':' and '}') or quoted.
JsonScan object(std::string_view text, size_t* pos, Json* out, int depth) {
  size_t p = skip_space(text, *pos + 1);
  *out = Json::object();
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (text[p] == '}') {
    *pos = p + 1;
    return JsonScan::kComplete;
  }
  while (true) {
    std::string key;
    if (starts_with(text, p, kQuote)) {
      if (JsonScan s = string(text, &p, &key); s != JsonScan::kComplete) return s;
    } else {
      const size_t b = p;
      while (p < text.size() && text[p] != ':' && text[p] != '}') ++p;
      if (p >= text.size()) return JsonScan::kIncomplete;
      if (p == b) return JsonScan::kInvalid;
      key = std::string(text.substr(b, p - b));
    }
    if (p >= text.size()) return JsonScan::kIncomplete;
    if (text[p++] != ':') return JsonScan::kInvalid;
    p = skip_space(text, p);
    Json v;
    if (JsonScan s = value(text, &p, &v, depth + 1); s != JsonScan::kComplete) return s;
    (*out)[key] = std::move(v);
    p = skip_space(text, p);
    if (p >= text.size()) return JsonScan::kIncomplete;
    if (text[p] == '}') break;
    if (text[p++] != ',') return JsonScan::kInvalid;
    p = skip_space(text, p);
  }
  *pos = p + 1;
  return JsonScan::kComplete;
}

// [value,...]
JsonScan list(std::string_view text, size_t* pos, Json* out, int depth) {
  size_t p = skip_space(text, *pos + 1);
  *out = Json::array();
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (text[p] == ']') {
    *pos = p + 1;
    return JsonScan::kComplete;
  }
  while (true) {
    Json v;
    if (JsonScan s = value(text, &p, &v, depth + 1); s != JsonScan::kComplete) return s;
    out->push_back(std::move(v));
    p = skip_space(text, p);
    if (p >= text.size()) return JsonScan::kIncomplete;
    if (text[p] == ']') break;
    if (text[p++] != ',') return JsonScan::kInvalid;
    p = skip_space(text, p);
  }
  *pos = p + 1;
  return JsonScan::kComplete;
}

JsonScan value(std::string_view text, size_t* pos, Json* out, int depth) {
  if (depth > kMaxDepth) return JsonScan::kInvalid;
  const size_t p = *pos;
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (starts_with(text, p, kQuote)) {
    std::string s;
    const JsonScan r = string(text, pos, &s);
    if (r == JsonScan::kComplete) *out = std::move(s);
    return r;
  }
  if (text[p] == '{') return object(text, pos, out, depth);
  if (text[p] == '[') return list(text, pos, out, depth);
  // A number, true, false or null: JSON's own spelling, up to the next separator.
  size_t e = p;
  while (e < text.size() && text[e] != ',' && text[e] != '}' && text[e] != ']' && text[e] != ' ' && text[e] != '\n') ++e;
  if (e >= text.size()) return JsonScan::kIncomplete;
  Json v = Json::parse(text.substr(p, e - p), nullptr, false);
  if (v.is_discarded() || v.is_object() || v.is_array() || v.is_string()) return JsonScan::kInvalid;
  *out = std::move(v);
  *pos = e;
  return JsonScan::kComplete;
}

}  // namespace

// After <|tool_call>: call:NAME{...}<tool_call|> (several calls are several blocks).
JsonScan gemma4_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  const std::string_view text = ctx.text;
  size_t p = *pos;
  if (JsonScan s = expect_literal(text, &p, "call:"); s != JsonScan::kComplete) return s;
  const size_t name_begin = p;
  while (p < text.size() && text[p] != '{' && text[p] != '<' && text[p] != '\n') ++p;
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (p == name_begin || text[p] != '{') return JsonScan::kInvalid;
  ToolCall call;
  call.name = std::string(text.substr(name_begin, p - name_begin));
  Json args;
  if (JsonScan s = object(text, &p, &args, 0); s != JsonScan::kComplete) return s;
  if (JsonScan s = close_tag(ctx, &p, "<tool_call|>"); s != JsonScan::kComplete) return s;
  call.arguments = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  calls->push_back(std::move(call));
  *pos = p;
  return JsonScan::kComplete;
}

}  // namespace ox::chat::detail
