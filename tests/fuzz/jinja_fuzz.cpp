// libFuzzer target: the input is a Jinja template. Parse it, then render it against a small fixed
// chat context (messages with a tool call, tools, scalars of each JSON type) with the
// RenderOptions limits lowered so that one run stays fast: a hostile template must end with an
// error, never a crash, a hang or unbounded memory.
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/chat/template.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

const nlohmann::ordered_json& context() {
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9\u4e16"},
      {"role": "assistant", "content": "", "reasoning_content": "think",
       "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": {"city": "Paris", "n": 2}}}]},
      {"role": "tool", "content": "{\"t\": 21}"},
      {"role": "user", "content": [{"type": "text", "text": "and now?"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get", "description": "Weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "n": 3, "x": -1.5, "flag": false, "nothing": null, "s": "h\u00e9llo W\u00f6rld", "list": [3, 1, 2], "obj": {"b": 1, "a": [true]}
  })", nullptr, false);
  OX_CHECK(!ctx.is_discarded());
  return ctx;
}

chat::RenderOptions limits() {
  chat::RenderOptions o;
  o.now = chat::DateTime{};  // no clock: the same input renders the same text
  o.max_output_bytes = 1 << 16;
  o.max_steps = 20'000;
  o.max_evals = 200'000;
  o.max_string_work = 1 << 22;
  o.max_list_items = 1 << 14;
  o.max_call_depth = 16;
  return o;
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  static const chat::RenderOptions options = limits();
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  Result<chat::ChatTemplate> tmpl = chat::ChatTemplate::parse(source);
  if (!tmpl.ok()) return 0;
  Result<std::string> text = tmpl->render(context(), options);
  if (text.ok()) OX_CHECK(text->size() <= options.max_output_bytes);
  return 0;
}
