// libFuzzer target: a model's reply parsed into OpenAI's assistant message, in every chat format's
// tool-call syntax (the first byte picks the format, the second the options), whole and streamed in
// pieces of 1-16 bytes through ToolReply (the server's and the CLI's streaming path): no crash, every
// delta and the final message serialisable. Partial parses are not required to extend each other:
// malformed XML calls (Qwen3-Coder) can shrink between pieces, which ToolReply skips (see the README).
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/tool_format.h"
#include "core/chat/tool_parse.h"
#include "core/session/tool_chat.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

const nlohmann::json& tools() {
  static const nlohmann::json t = nlohmann::json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
      "properties": {"query": {"type": "string"}, "limit": {"type": "number"}, "exact": {"type": "boolean"}}}}}
  ])");
  return t;
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  using namespace ox::chat;
  if (size < 2) return 0;
  const std::vector<ChatFormatDef>& formats = all_chat_formats();
  const ChatFormat format = formats[data[0] % formats.size()].format;
  ParseOptions options;
  options.reasoning_format = (data[1] & 1) != 0 ? ReasoningFormat::kNone : ReasoningFormat::kDeepSeek;
  options.thinking_forced_open = (data[1] & 2) != 0;
  options.parse_tool_calls = (data[1] & 4) == 0;
  if ((data[1] & 8) != 0) options.tools = &tools();
  const size_t cut_step = 1 + (data[1] >> 4);  // stream in pieces of 1-16 bytes
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);

  ToolOptions tool_options;
  tool_options.tools = nlohmann::ordered_json::parse(tools().dump());
  tool_options.choice.mode = options.parse_tool_calls ? ToolChoice::Mode::kAuto : ToolChoice::Mode::kNone;
  ToolReply reply(format, tool_options, options.thinking_forced_open, /*id_seed=*/1);
  auto check_deltas = [](const std::vector<nlohmann::ordered_json>& deltas) {
    for (const nlohmann::ordered_json& d : deltas) OX_CHECK(d.is_object());
    (void)nlohmann::ordered_json(deltas).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  for (size_t begin = 0; begin < text.size(); begin += cut_step) check_deltas(reply.append(text.substr(begin, cut_step)));
  check_deltas(reply.finish());
  (void)reply.finish_reason("stop");
  Result<ParsedMessage> whole = parse_assistant_output(format, text, /*is_partial=*/false, options);
  if (whole.ok()) (void)whole->to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
