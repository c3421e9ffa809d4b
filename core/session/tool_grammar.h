// Grammars that force a tool call in a chat format's syntax, with each tool's arguments held to
// its `parameters` JSON schema. Lives in core/session because it joins core/chat (the formats)
// and core/sampler (the schema converter), two layers that do not know each other.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/tool_format.h"
#include "core/session/lazy_grammar.h"

namespace ox {

struct ToolGrammarOptions {
  bool parallel_tool_calls = true;  // one or more calls; false: exactly one
  // A marker that is one control token of the vocabulary ("<|python_tag|>", "[TOOL_CALLS]") must be
  // matched as that token (control tokens are kept out of text matching): its id, or nullopt for
  // text. Unset: every marker is text (tests, grammars matched against text).
  std::function<std::optional<int32_t>(std::string_view marker)> control_token_id;
};

struct ToolGrammar {
  std::string gbnf;                   // start rule "root": the call(s) and nothing else
  bool lazy = false;                  // tool_choice auto: apply the grammar from a trigger on
  // The texts that start a call: the format's markers that this grammar's root begins with (a
  // lazy grammar replays the reply from the trigger on); for Functionary v3.2, whose first call
  // has no marker, each tool's "NAME\n" at the reply's start and ">>>NAME\n" anywhere.
  std::vector<GrammarTrigger> triggers;
};

// tool_choice required or named: the reply must be calls (named: of that tool only); auto: the
// same grammar, lazy, with the format's triggers. Every format with a call syntax has one: JSON
// arguments held to each tool's `parameters` schema, or named parameters (Qwen3-Coder, GLM 4.5,
// LFM2, Gemma 4; tool_grammar_named.h) each held to its property's schema as far as the syntax
// allows. none is an error (nothing to constrain), and so are kContentOnly (kUnsupported) and
// malformed tools. `tools` is ordered: a schema's property order is the order the grammar writes.
Result<ToolGrammar> tool_call_grammar(chat::ChatFormat format, const nlohmann::ordered_json& tools,
                                      const chat::ToolChoice& choice, const ToolGrammarOptions& options = {});

namespace tool_grammar_detail {
// Every rule name of `gbnf` (definitions and references) prefixed with `prefix`, so the grammars
// of several schemas can share one file.
std::string prefix_rules(std::string_view gbnf, std::string_view prefix);
}  // namespace tool_grammar_detail

}  // namespace ox
