// libFuzzer target: a model's reply parsed into OpenAI's assistant message, in every chat format's
// tool-call syntax (the first byte picks the format, the second the options). The reply is also
// streamed in pieces cut at fuzzed points: each partial parse must extend the previous one
// (message_deltas succeeds, as the server's stream relies on it), and the final parse must be
// reachable from the last partial one unless a call turned out malformed (then content keeps it).
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/tool_format.h"
#include "core/chat/tool_parse.h"
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

  ParsedMessage prev;
  for (size_t end = cut_step; end < text.size(); end += cut_step) {
    Result<ParsedMessage> partial = parse_assistant_output(format, text.substr(0, end), /*is_partial=*/true, options);
    if (!partial.ok()) continue;
    Result<std::vector<nlohmann::ordered_json>> deltas = message_deltas(prev, *partial);
    OX_CHECK(deltas.ok());  // a partial parse only ever extends the previous one
    prev = std::move(partial).value();
  }
  Result<ParsedMessage> whole = parse_assistant_output(format, text, /*is_partial=*/false, options);
  if (whole.ok()) (void)whole->to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
