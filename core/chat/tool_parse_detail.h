// Shared pieces of the per-format reply parsers (tool_parse_*.cpp): literal and marker matching
// that knows a streamed text may stop inside a marker, and the JSON call shapes several formats use.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/json_scan.h"
#include "core/chat/tool_parse.h"

namespace ox::chat::detail {

struct Ctx {
  std::string_view text;
  bool partial;
  const ParseOptions* options;
};

// text[*pos..] starts with `lit`: advance, kComplete. The text ends inside it: kIncomplete.
JsonScan expect_literal(std::string_view text, size_t* pos, std::string_view lit);
// The first of `lits` text[*pos..] starts with (*which set); kIncomplete if the text could still
// become one listed before any that matches (so "```json" before "```" waits for "```jso").
JsonScan expect_any(std::string_view text, size_t* pos, std::initializer_list<std::string_view> lits, size_t* which);
// A closing tag: a reply that ends where (or inside) it should be counts as closed when complete.
JsonScan close_tag(const Ctx& ctx, size_t* pos, std::string_view lit);

struct MarkerHit {
  bool found = false;
  bool partial = false;  // only the marker's first bytes, at the end of the text
  size_t pos = 0;
  size_t index = 0;
};
MarkerHit find_marker(const Ctx& ctx, size_t pos, std::span<const std::string_view> markers);

// {"<name>": "...", "<args>": {...}, "<id>": "..."}: the keys one format uses.
struct CallKeys {
  std::string_view name = "name";
  std::string_view args = "arguments";
  std::string_view args_alt;  // a second spelling ("parameters")
  std::string_view id;
};
// *named: a call with a complete name was found (incomplete objects stream their arguments).
JsonScan scan_call_object(std::string_view text, size_t pos, const CallKeys& keys, size_t* end, ToolCall* call, bool* named);
// [call, call, ...]; incomplete arrays keep the calls named so far.
JsonScan scan_call_array(std::string_view text, size_t pos, const CallKeys& keys, size_t* end, std::vector<ToolCall>* calls);

// A tool-call block after one of the markers: its calls, *pos moved past it.
using BlockParser = JsonScan (*)(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
// Content with tool-call blocks wherever a marker appears; a block that does not parse is content.
void parse_marked_blocks(const Ctx& ctx, std::span<const std::string_view> markers, BlockParser block, ParsedMessage* msg);

// An XML-style parameter value as JSON: a string unless the tool's schema (or, without one, the
// text itself) says otherwise.
std::string xml_value_to_json(const Ctx& ctx, std::string_view tool, std::string_view key, std::string_view value);
std::string json_quote(std::string_view s);
void rstrip(std::string* s);
// How many bytes at the end of `s` start a UTF-8 character that is not complete yet.
size_t incomplete_utf8_tail(std::string_view s);
// Drops an opening wrapper tag at the start of content and its closing tag at the end (Granite's
// <response>, Command R7B's <|START_RESPONSE|>); partial: also a closing tag's first bytes.
void strip_wrapper(const Ctx& ctx, std::string_view open, std::string_view close, std::string* content);

// The tool-call blocks of the formats parsed by parse_marked_blocks (at their registry markers).
JsonScan hermes_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan qwen3_coder_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan glm_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan mistral_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan granite_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan command_r_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan deepseek_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan kimi_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan lfm2_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);
JsonScan gemma4_block(const Ctx& ctx, size_t* pos, size_t marker, std::vector<ToolCall>* calls);

// The formats with a framing of their own: the whole reply after reasoning, into *msg.
using BodyParser = void (*)(const Ctx& ctx, ParsedMessage* msg);
void parse_llama3(const Ctx& ctx, ParsedMessage* msg);
void parse_functionary(const Ctx& ctx, ParsedMessage* msg);
void parse_gpt_oss(const Ctx& ctx, ParsedMessage* msg);
void parse_generic(const Ctx& ctx, ParsedMessage* msg);

}  // namespace ox::chat::detail
