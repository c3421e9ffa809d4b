// Tool-call grammars for the formats that write arguments one named parameter at a time instead of
// as a JSON object: Qwen3-Coder and GLM 4.5 (XML-style tags), LFM2 (Python keywords), Gemma 4
// (key:value with <|"|> strings). Used by tool_call_grammar (tool_grammar.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/tool_format.h"

namespace ox::tool_grammar_detail {

// Whether `format` writes named parameters (a grammar from named_args_call, not a JSON schema).
bool has_named_args(chat::ChatFormat format);

// A marker as GBNF: its control token where the vocabulary has one, else its text.
using MarkFn = std::function<std::string(std::string_view marker)>;

// One call of `format` to the tool `name` (tools[index]) whose `parameters` schema is `params`:
// GBNF for the call; its helper rules (prefixed "t<index>-") are appended to *rules. Each property
// is a parameter: required ones must appear, none twice, in any order up to kMaxPermuted
// parameters (as llama.cpp's permute), in the schema's order beyond. A parameter that may be a
// string is raw text (its enum's values, where the enum has only strings) that cannot hold the
// closing tag, as llama.cpp writes them; any other is held to its own schema's JSON grammar
// (Gemma 4's objects and arrays: its own value syntax, unconstrained). String keywords such as
// pattern or maxLength are not held in raw text (llama.cpp holds them neither).
Result<std::string> named_args_call(chat::ChatFormat format, std::string_view name, size_t index, const nlohmann::ordered_json& params,
                                    const MarkFn& mark, std::string* rules);

inline constexpr size_t kMaxPermuted = 6;

// GBNF rules for any text that does not contain `stop` (ASCII): a KMP automaton whose every state
// accepts, named prefix0 .. prefix<n-1>; returns the start rule's name.
std::string text_without(std::string_view prefix, std::string_view stop, std::string* rules);

}  // namespace ox::tool_grammar_detail
