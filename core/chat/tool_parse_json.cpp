// Reply parsers for the formats whose tool-call arguments are JSON: Hermes/Qwen (<tool_call>),
// Mistral ([TOOL_CALLS]), Granite (<|tool_call|>), Command R (Action:), DeepSeek R1, Kimi K2,
// Llama 3.x and the generic {"tool_calls": ...} fallback.
#include <array>
#include <cctype>

#include "core/chat/tool_parse_detail.h"

namespace ox::chat::detail {
namespace {

// A call object (keys) followed by an optional closing tag.
JsonScan call_then_close(const Ctx& ctx, size_t* pos, const CallKeys& keys, std::string_view close,
                         std::vector<ToolCall>* calls) {
  size_t p = skip_json_ws(ctx.text, *pos);
  if (p >= ctx.text.size()) return JsonScan::kIncomplete;
  ToolCall call;
  bool named = false;
  size_t end = p;
  const JsonScan s = scan_call_object(ctx.text, p, keys, &end, &call, &named);
  if (s == JsonScan::kInvalid) return s;
  if (named) calls->push_back(std::move(call));
  if (s == JsonScan::kIncomplete) return s;
  p = skip_json_ws(ctx.text, end);
  if (!close.empty()) {
    const JsonScan c = close_tag(ctx, &p, close);
    if (c != JsonScan::kComplete) return c;
  }
  *pos = p;
  return JsonScan::kComplete;
}

// A call array, then an optional closing tag.
JsonScan array_then_close(const Ctx& ctx, size_t* pos, const CallKeys& keys, std::string_view close,
                          std::vector<ToolCall>* calls) {
  size_t p = skip_json_ws(ctx.text, *pos);
  size_t end = p;
  const JsonScan s = scan_call_array(ctx.text, p, keys, &end, calls);
  if (s != JsonScan::kComplete) return s;
  p = skip_json_ws(ctx.text, end);
  if (!close.empty()) {
    const JsonScan c = close_tag(ctx, &p, close);
    if (c != JsonScan::kComplete) return c;
  }
  *pos = p;
  return JsonScan::kComplete;
}

constexpr CallKeys kNameArguments{"name", "arguments", "parameters", ""};

// Calls that follow `begin` markers until an `end` marker (a complete reply may stop before it,
// after at least one call); `item` reads one call after its `begin`.
using ItemParser = JsonScan (*)(const Ctx& ctx, size_t* pos, std::vector<ToolCall>* calls);
JsonScan call_section(const Ctx& ctx, size_t* pos, std::string_view end, std::string_view begin, ItemParser item,
                      std::vector<ToolCall>* calls) {
  size_t p = *pos;
  while (true) {
    p = skip_json_ws(ctx.text, p);
    size_t which = 0;
    const JsonScan s = expect_any(ctx.text, &p, {end, begin}, &which);
    if (s == JsonScan::kIncomplete && !ctx.partial && !calls->empty()) {  // the reply ended without the section's end
      *pos = ctx.text.size();
      return JsonScan::kComplete;
    }
    if (s != JsonScan::kComplete) return s;
    if (which == 0) break;
    const JsonScan c = item(ctx, &p, calls);
    if (c != JsonScan::kComplete) return c;
  }
  *pos = p;
  return JsonScan::kComplete;
}

// `call` with the JSON value at text[*p..] as its arguments (streamed while incomplete).
JsonScan json_arguments(const Ctx& ctx, size_t* p, ToolCall call, std::vector<ToolCall>* calls) {
  *p = skip_json_ws(ctx.text, *p);
  const JsonSpan args = scan_json_value(ctx.text, *p);
  if (args.state == JsonScan::kInvalid) return args.state;
  call.arguments = minify_json(ctx.text.substr(*p, args.end - *p));
  calls->push_back(std::move(call));
  *p = skip_json_ws(ctx.text, args.end);
  return args.state;
}

// function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>
JsonScan deepseek_item(const Ctx& ctx, size_t* pos, std::vector<ToolCall>* calls) {
  const std::string_view text = ctx.text;
  constexpr std::string_view kSep = "<｜tool▁sep｜>";
  const size_t sep = text.find(kSep, *pos);
  const size_t nl = sep == std::string_view::npos ? sep : text.find('\n', sep);
  if (nl == std::string_view::npos) return JsonScan::kIncomplete;
  ToolCall call;
  call.name = std::string(text.substr(sep + kSep.size(), nl - sep - kSep.size()));
  size_t p = skip_json_ws(text, nl + 1);
  const JsonScan fence = expect_literal(text, &p, "```json");
  if (fence == JsonScan::kIncomplete) {
    calls->push_back(std::move(call));
    return fence;
  }
  const JsonScan args = json_arguments(ctx, &p, std::move(call), calls);
  if (args != JsonScan::kComplete) return args;
  if (fence == JsonScan::kComplete) {
    const JsonScan c = expect_literal(text, &p, "```");
    if (c != JsonScan::kComplete) return c;
    p = skip_json_ws(text, p);
  }
  const JsonScan c = close_tag(ctx, &p, "<｜tool▁call▁end｜>");
  if (c == JsonScan::kComplete) *pos = p;
  return c;
}

// functions.NAME:IDX<|tool_call_argument_begin|>ARGS<|tool_call_end|>
JsonScan kimi_item(const Ctx& ctx, size_t* pos, std::vector<ToolCall>* calls) {
  constexpr std::string_view kArgs = "<|tool_call_argument_begin|>";
  const size_t arg = ctx.text.find(kArgs, *pos);
  if (arg == std::string_view::npos) return JsonScan::kIncomplete;
  ToolCall call;
  call.id = std::string(ctx.text.substr(*pos, arg - *pos));
  std::string_view name = call.id;
  if (name.substr(0, 10) == "functions.") name.remove_prefix(10);
  if (const size_t colon = name.rfind(':'); colon != std::string_view::npos) name = name.substr(0, colon);
  if (name.empty()) return JsonScan::kInvalid;
  call.name = std::string(name);
  size_t p = arg + kArgs.size();
  const JsonScan args = json_arguments(ctx, &p, std::move(call), calls);
  if (args != JsonScan::kComplete) return args;
  const JsonScan c = close_tag(ctx, &p, "<|tool_call_end|>");
  if (c == JsonScan::kComplete) *pos = p;
  return c;
}

}  // namespace

// <tool_call>{"name", "arguments"}</tool_call>, or (Qwen 2.5 at times, accepted by llama.cpp)
// <function=NAME>{ARGS}</function>.
JsonScan hermes_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls) {
  if (marker == 0) return call_then_close(ctx, pos, kNameArguments, "</tool_call>", calls);
  const size_t gt = ctx.text.find('>', *pos);
  if (gt == std::string_view::npos) return JsonScan::kIncomplete;
  ToolCall call;
  call.name = std::string(trim_space(ctx.text.substr(*pos, gt - *pos)));
  if (call.name.empty() || call.name.find_first_of("<\n\"") != std::string::npos) return JsonScan::kInvalid;
  size_t p = gt + 1;
  const size_t open = skip_json_ws(ctx.text, p);
  if (open >= ctx.text.size()) return JsonScan::kIncomplete;  // no call until its arguments start
  if (ctx.text[open] != '{') return JsonScan::kInvalid;
  const JsonScan args = json_arguments(ctx, &p, std::move(call), calls);
  if (args != JsonScan::kComplete) return args;
  const JsonScan c = close_tag(ctx, &p, "</function>");
  if (c == JsonScan::kComplete) *pos = p;
  return c;
}

JsonScan mistral_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  return array_then_close(ctx, pos, {"name", "arguments", "", "id"}, "", calls);
}

JsonScan granite_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  return array_then_close(ctx, pos, kNameArguments, "", calls);
}

// Command R7B: <|START_ACTION|>[...]<|END_ACTION|>; Command R+: Action: ```json [...] ```.
JsonScan command_r_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls) {
  constexpr CallKeys kKeys{"tool_name", "parameters", "", "tool_call_id"};
  if (marker == 0) return array_then_close(ctx, pos, kKeys, "<|END_ACTION|>", calls);
  size_t p = skip_json_ws(ctx.text, *pos);
  size_t which = 0;
  const JsonScan fence = expect_any(ctx.text, &p, {"```json", "```"}, &which);
  if (fence == JsonScan::kIncomplete) return fence;
  const bool fenced = fence == JsonScan::kComplete;
  const JsonScan s = array_then_close(ctx, &p, kKeys, "", calls);
  if (s != JsonScan::kComplete) return s;
  if (fenced) {
    const JsonScan c = close_tag(ctx, &p, "```");
    if (c != JsonScan::kComplete) return c;
  }
  *pos = p;
  return JsonScan::kComplete;
}

JsonScan deepseek_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  return call_section(ctx, pos, "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", deepseek_item, calls);
}

JsonScan kimi_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  return call_section(ctx, pos, "<|tool_calls_section_end|>", "<|tool_call_begin|>", kimi_item, calls);
}

namespace {

// Python keyword arguments as Llama 3.x writes builtin calls: NAME.call(query="...", n=3).
bool python_kwargs(std::string_view text, size_t* pos, nlohmann::ordered_json* args) {
  size_t p = *pos;
  *args = nlohmann::ordered_json::object();
  while (true) {
    p = skip_json_ws(text, p);
    if (p >= text.size()) return false;
    if (text[p] == ')') break;
    const size_t key_begin = p;
    while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_')) ++p;
    if (p == key_begin) return false;
    const std::string key(text.substr(key_begin, p - key_begin));
    p = skip_json_ws(text, p);
    if (p >= text.size() || text[p] != '=') return false;
    p = skip_json_ws(text, p + 1);
    if (p >= text.size()) return false;
    if (text[p] == '"' || text[p] == '\'') {
      const char q = text[p++];
      std::string value;
      while (p < text.size() && text[p] != q) {
        if (text[p] == '\\' && p + 1 < text.size()) {
          const char e = text[++p];
          value.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
        } else {
          value.push_back(text[p]);
        }
        ++p;
      }
      if (p >= text.size()) return false;
      ++p;
      (*args)[key] = value;
    } else if (text[p] == '{' || text[p] == '[') {
      // An object or array argument (what the grammar of an LFM2 call writes for such a
      // parameter): JSON, whose commas and parentheses belong to it.
      const JsonSpan span = scan_json_value(text, p);
      if (span.state != JsonScan::kComplete) return false;
      const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.substr(p, span.end - p), nullptr, false);
      if (j.is_discarded()) return false;
      (*args)[key] = j;
      p = span.end;
    } else {
      const size_t v = p;
      while (p < text.size() && text[p] != ',' && text[p] != ')') ++p;
      std::string_view lit = text.substr(v, p - v);
      while (!lit.empty() && lit.back() == ' ') lit.remove_suffix(1);
      if (lit == "True") (*args)[key] = true;
      else if (lit == "False") (*args)[key] = false;
      else if (lit == "None") (*args)[key] = nullptr;
      else {
        const nlohmann::ordered_json j = nlohmann::ordered_json::parse(lit, nullptr, false);
        if (j.is_discarded()) return false;
        (*args)[key] = j;
      }
    }
    p = skip_json_ws(text, p);
    if (p < text.size() && text[p] == ',') ++p;
  }
  *pos = p + 1;
  return true;
}

// NAME(key=value, ...) with a dotted NAME (LFM2's calls); arguments as a JSON object.
JsonScan python_call(const Ctx& ctx, size_t* pos, ToolCall* call) {
  const std::string_view text = ctx.text;
  size_t p = *pos;
  while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_' || text[p] == '.')) ++p;
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (p == *pos || text[p] != '(') return JsonScan::kInvalid;
  call->name = std::string(text.substr(*pos, p - *pos));
  ++p;
  nlohmann::ordered_json args;
  if (!python_kwargs(text, &p, &args)) return ctx.partial ? JsonScan::kIncomplete : JsonScan::kInvalid;
  call->arguments = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  *pos = p;
  return JsonScan::kComplete;
}

// After <|python_tag|>: a JSON call, a builtin NAME.call(...), or code for the python tool.
JsonScan llama3_python_tag(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  const std::string_view text = ctx.text;
  size_t p = skip_json_ws(text, *pos);
  if (p >= text.size()) return JsonScan::kIncomplete;
  if (text[p] == '{') return call_then_close(ctx, pos, kNameArguments, "", calls);
  size_t q = p;
  while (q < text.size() && (std::isalnum(static_cast<unsigned char>(text[q])) || text[q] == '_')) ++q;
  size_t after = q;
  const JsonScan call_open = q > p ? expect_literal(text, &after, ".call(") : JsonScan::kInvalid;
  if (call_open == JsonScan::kComplete) {
    nlohmann::ordered_json args;
    if (!python_kwargs(text, &after, &args)) return ctx.partial ? JsonScan::kIncomplete : JsonScan::kInvalid;
    calls->push_back({"", std::string(text.substr(p, q - p)), args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
    *pos = after;
    return JsonScan::kComplete;
  }
  if (call_open == JsonScan::kIncomplete || ctx.partial) return JsonScan::kIncomplete;
  // code_interpreter: the rest is the code (whole, once the reply is complete)
  nlohmann::ordered_json args = {{"code", std::string(text.substr(p))}};
  calls->push_back({"", "python", args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  *pos = text.size();
  return JsonScan::kComplete;
}

}  // namespace

// [NAME(k=v), NAME(k=v)]<|tool_call_end|>
JsonScan lfm2_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  size_t p = skip_json_ws(ctx.text, *pos);
  JsonScan s = expect_literal(ctx.text, &p, "[");
  while (s == JsonScan::kComplete) {
    ToolCall call;
    p = skip_json_ws(ctx.text, p);
    s = python_call(ctx, &p, &call);
    if (s != JsonScan::kComplete) return s;
    calls->push_back(std::move(call));
    p = skip_json_ws(ctx.text, p);
    if (p >= ctx.text.size()) return JsonScan::kIncomplete;
    if (ctx.text[p] == ']') break;
    s = ctx.text[p++] == ',' ? JsonScan::kComplete : JsonScan::kInvalid;
  }
  if (s != JsonScan::kComplete) return s;
  p = skip_json_ws(ctx.text, p + 1);
  s = close_tag(ctx, &p, "<|tool_call_end|>");
  if (s == JsonScan::kComplete) *pos = p;
  return s;
}

// Llama 3.x: a reply that is JSON call objects ({"name", "parameters"}, separated by ';' or
// whitespace), or text then <|python_tag|> and a call.
void parse_llama3(const Ctx& ctx, ParsedMessage* msg) {
  const std::string_view text = ctx.text;
  size_t p = skip_json_ws(text, 0);
  if (p < text.size() && text[p] == '{') {
    std::vector<ToolCall> calls;
    JsonScan s = JsonScan::kComplete;
    while (true) {
      ToolCall call;
      bool named = false;
      size_t end = p;
      s = scan_call_object(text, p, kNameArguments, &end, &call, &named);
      if (s == JsonScan::kInvalid) break;
      if (named) calls.push_back(std::move(call));
      if (s == JsonScan::kIncomplete) break;
      p = skip_json_ws(text, end);
      if (p < text.size() && text[p] == ';') p = skip_json_ws(text, p + 1);
      if (p >= text.size()) break;
      if (text[p] != '{') {
        s = JsonScan::kInvalid;
        break;
      }
    }
    if (s == JsonScan::kComplete || (s == JsonScan::kIncomplete && ctx.partial)) {
      msg->tool_calls = std::move(calls);
      return;
    }
  }
  static constexpr std::array<std::string_view, 1> kMarkers = {"<|python_tag|>"};
  parse_marked_blocks(ctx, kMarkers, llama3_python_tag, msg);
}

// The generic format: the whole reply is {"tool_calls": [...]}, {"tool_call": {...}} or
// {"response": ...}; anything else is content.
void parse_generic(const Ctx& ctx, ParsedMessage* msg) {
  const std::string_view text = ctx.text;
  const size_t p = skip_json_ws(text, 0);
  if (p >= text.size() || text[p] != '{') {
    msg->content = std::string(text);
    return;
  }
  const JsonObjectScan o = scan_json_object(text, p);
  std::vector<ToolCall> calls;
  bool recognised = false;
  if (const JsonMember* m = o.find("tool_calls")) {
    size_t end = 0;
    recognised = scan_call_array(text, m->value_begin, kNameArguments, &end, &calls) != JsonScan::kInvalid;
  } else if (const JsonMember* m = o.find("tool_call")) {
    ToolCall call;
    bool named = false;
    size_t end = 0;
    recognised = scan_call_object(text, m->value_begin, kNameArguments, &end, &call, &named) != JsonScan::kInvalid;
    if (named) calls.push_back(std::move(call));
  } else if (const JsonMember* m = o.find("response")) {
    recognised = true;
    if (m->value.state == JsonScan::kComplete) {
      const std::string_view v = text.substr(m->value_begin, m->value.end - m->value_begin);
      if (!decode_json_string(v, &msg->content)) msg->content = minify_json(v);
    }
  }
  if (o.state == JsonScan::kInvalid || (o.state == JsonScan::kIncomplete && !ctx.partial) ||
      (o.state == JsonScan::kComplete && !recognised)) {
    msg->content = std::string(text);
    return;
  }
  if (o.state == JsonScan::kIncomplete && o.members.empty()) return;  // held back until a key shows
  msg->tool_calls = std::move(calls);
}

}  // namespace ox::chat::detail
