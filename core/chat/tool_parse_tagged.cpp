// Reply parsers for the formats with their own framing: Qwen3-Coder and GLM 4.5 (XML-style
// parameters), Functionary v3.2 (>>>recipient) and gpt-oss (harmony channels).
#include <array>
#include <cctype>

#include "core/chat/tool_parse_detail.h"

namespace ox::chat::detail {
namespace {

// Arguments built one parameter at a time: "{" then "k":v pairs, "}" once the call closes, so a
// partial call's arguments are a prefix of the final ones.
void add_param(const Ctx& ctx, ToolCall* call, std::string_view key, std::string_view value) {
  call->arguments += call->arguments.size() > 1 ? "," : "";
  call->arguments += json_quote(key) + ":" + xml_value_to_json(ctx, call->name, key, value);
}

}  // namespace

// <function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>...</function>\n</tool_call>
JsonScan qwen3_coder_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  const std::string_view text = ctx.text;
  size_t p = skip_json_ws(text, *pos);
  JsonScan s = expect_literal(text, &p, "<function=");
  if (s != JsonScan::kComplete) return s;
  const size_t gt = text.find('>', p);
  if (gt == std::string_view::npos) return JsonScan::kIncomplete;
  ToolCall call{"", std::string(trim_space(text.substr(p, gt - p))), "{"};
  if (call.name.empty()) return JsonScan::kInvalid;
  p = gt + 1;
  while (true) {
    p = skip_json_ws(text, p);
    size_t which = 0;
    s = expect_any(text, &p, {"</function>", "<parameter="}, &which);
    if (s == JsonScan::kIncomplete && !ctx.partial && p >= text.size()) break;  // ended without </function>
    if (s != JsonScan::kComplete) {
      if (s == JsonScan::kIncomplete) calls->push_back(std::move(call));
      return s;
    }
    if (which == 0) break;
    const size_t key_end = text.find('>', p);
    const size_t value_end = key_end == std::string_view::npos ? key_end : text.find("</parameter>", key_end);
    if (value_end == std::string_view::npos) {
      calls->push_back(std::move(call));
      return JsonScan::kIncomplete;
    }
    std::string_view value = text.substr(key_end + 1, value_end - key_end - 1);
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    add_param(ctx, &call, trim_space(text.substr(p, key_end - p)), value);
    p = value_end + std::string_view("</parameter>").size();
  }
  call.arguments += "}";
  calls->push_back(std::move(call));
  p = skip_json_ws(text, p);
  s = close_tag(ctx, &p, "</tool_call>");
  if (s == JsonScan::kComplete) *pos = p;
  return s;
}

// NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>...</tool_call>
JsonScan glm_block(const Ctx& ctx, size_t* pos, size_t, std::vector<ToolCall>* calls) {
  const std::string_view text = ctx.text;
  size_t p = *pos;
  size_t name_end = std::min(text.find('\n', p), std::min(text.find("<arg_key>", p), text.find("</tool_call>", p)));
  if (name_end == std::string_view::npos) return JsonScan::kIncomplete;
  ToolCall call{"", std::string(trim_space(text.substr(p, name_end - p))), "{"};
  if (call.name.empty()) return JsonScan::kInvalid;
  p = name_end;
  while (true) {
    p = skip_json_ws(text, p);
    size_t which = 0;
    JsonScan s = expect_any(text, &p, {"</tool_call>", "<arg_key>"}, &which);
    if (s == JsonScan::kIncomplete && !ctx.partial) break;  // ended without </tool_call>
    if (s != JsonScan::kComplete) {
      if (s == JsonScan::kIncomplete) calls->push_back(std::move(call));
      return s;
    }
    if (which == 0) break;
    const size_t key_end = text.find("</arg_key>", p);
    size_t v = key_end == std::string_view::npos ? key_end : skip_json_ws(text, key_end + 10);
    if (v != std::string_view::npos) {
      s = expect_literal(text, &v, "<arg_value>");
      if (s == JsonScan::kInvalid) return s;
      if (s == JsonScan::kIncomplete) v = std::string_view::npos;
    }
    const size_t value_end = v == std::string_view::npos ? v : text.find("</arg_value>", v);
    if (value_end == std::string_view::npos) {
      calls->push_back(std::move(call));
      return JsonScan::kIncomplete;
    }
    add_param(ctx, &call, trim_space(text.substr(p, key_end - p)), text.substr(v, value_end - v));
    p = value_end + std::string_view("</arg_value>").size();
  }
  call.arguments += "}";
  calls->push_back(std::move(call));
  *pos = std::min(p, text.size());
  return JsonScan::kComplete;
}

namespace {

bool is_recipient(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

// Functionary v3.2: the prompt ends with ">>>"; the reply is "RECIPIENT\nBODY" segments joined by
// ">>>", where recipient "all" is text for the user and any other is a call with JSON arguments
// (python may take raw code).
void parse_functionary(const Ctx& ctx, ParsedMessage* msg) {
  const std::string_view text = ctx.text;
  static constexpr std::array<std::string_view, 1> kSep = {">>>"};
  size_t pos = text.substr(0, 3) == ">>>" ? 3 : 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (!ctx.partial) msg->content += text.substr(pos);
      return;
    }
    const std::string_view recipient = trim_space(text.substr(pos, nl - pos));
    if (!is_recipient(recipient)) {
      msg->content += text.substr(pos);
      return;
    }
    if (recipient == "all") {
      const MarkerHit hit = find_marker(ctx, nl + 1, kSep);
      msg->content += text.substr(nl + 1, (hit.found ? hit.pos : text.size()) - nl - 1);
      if (!hit.found || hit.partial) return;
      pos = hit.pos + 3;
      continue;
    }
    size_t p = skip_json_ws(text, nl + 1);
    ToolCall call{"", std::string(recipient), ""};
    size_t body_end = text.size();
    if (p < text.size() && text[p] == '{') {
      const JsonSpan args = scan_json_value(text, p);
      if (args.state == JsonScan::kInvalid || (args.state == JsonScan::kIncomplete && !ctx.partial)) {
        msg->content += text.substr(pos);
        return;
      }
      call.arguments = minify_json(text.substr(p, args.end - p));
      msg->tool_calls.push_back(std::move(call));
      if (args.state == JsonScan::kIncomplete) return;
      body_end = args.end;
    } else if (recipient == "python") {
      const MarkerHit hit = find_marker(ctx, nl + 1, kSep);
      if (ctx.partial && (!hit.found || hit.partial)) return;  // code is sent whole
      body_end = hit.found ? hit.pos : text.size();
      nlohmann::ordered_json code = {{"code", std::string(text.substr(nl + 1, body_end - nl - 1))}};
      call.arguments = code.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      msg->tool_calls.push_back(std::move(call));
    } else {
      if (!ctx.partial || p < text.size()) msg->content += text.substr(pos);
      return;
    }
    p = skip_json_ws(text, body_end);
    if (p >= text.size()) return;
    const JsonScan s = expect_literal(text, &p, ">>>");
    if (s == JsonScan::kIncomplete) return;
    if (s == JsonScan::kInvalid) {
      msg->content += text.substr(p);
      return;
    }
    pos = p;
  }
}

// gpt-oss (harmony): messages "<|channel|>C[ to=R][ <|constrain|>json]<|message|>BODY<|end|>",
// later ones after "<|start|>assistant"; the recipient may also sit before <|channel|>. Analysis
// is reasoning, final and commentary without recipient are content, "to=functions.NAME" a call.
void parse_gpt_oss(const Ctx& ctx, ParsedMessage* msg) {
  const std::string_view text = ctx.text;
  const bool extract = ctx.options->reasoning_format == ReasoningFormat::kDeepSeek;
  static constexpr std::array<std::string_view, 4> kEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
  constexpr std::string_view kMessage = "<|message|>";
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t m = text.find(kMessage, pos);
    if (m == std::string_view::npos) {
      if (!ctx.partial) msg->content += trim_space(text.substr(pos));  // no harmony framing: plain text
      return;
    }
    std::string_view header = text.substr(pos, m - pos);
    if (header.substr(0, 18) == "<|start|>assistant") header.remove_prefix(18);
    std::string_view channel, recipient;
    if (const size_t c = header.find("<|channel|>"); c != std::string_view::npos) {
      channel = header.substr(c + 11);
      channel = channel.substr(0, std::min(channel.find(' '), channel.find('<')));
    }
    if (const size_t t = header.find("to="); t != std::string_view::npos) {
      recipient = header.substr(t + 3);
      recipient = recipient.substr(0, std::min(recipient.find(' '), recipient.find('<')));
    }
    const size_t body = m + kMessage.size();
    Ctx rest = ctx;
    const MarkerHit hit = find_marker(rest, body, kEnds);
    const bool ended = hit.found && !hit.partial;
    const size_t body_end = hit.found ? hit.pos : text.size();
    const std::string_view content = text.substr(body, body_end - body);
    if (recipient.size() > 10 && recipient.substr(0, 10) == "functions.") {
      const size_t p = skip_json_ws(text, body);
      const JsonSpan args = scan_json_value(text.substr(0, body_end), p);
      const bool done = args.state == JsonScan::kComplete;
      const bool trailing = done && skip_json_ws(text.substr(0, body_end), args.end) < body_end;
      if (args.state == JsonScan::kInvalid || trailing || (!done && (ended || !ctx.partial))) {
        msg->content += content;  // arguments that are not JSON: kept as text
      } else {
        msg->tool_calls.push_back({"", std::string(recipient.substr(10)), minify_json(text.substr(p, args.end - p))});
      }
    } else if (channel == "analysis" && extract) {
      if (!msg->reasoning_content.empty() && !content.empty()) msg->reasoning_content += "\n";
      msg->reasoning_content += trim_space(content);
    } else if (channel == "analysis") {
      msg->content += text.substr(pos, body_end - pos);
      if (ended) msg->content += kEnds[hit.index];
    } else {
      msg->content += content;
    }
    if (!ended) return;
    pos = body_end + (hit.index == 3 ? 0 : kEnds[hit.index].size());
  }
}

}  // namespace ox::chat::detail
