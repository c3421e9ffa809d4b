// GBNF text -> Grammar, accepting what llama.cpp's grammar parser accepts (rules, alternation,
// groups, * + ? {m} {m,} {m,n}, character classes, escapes, '.', comments, token references).
// Every error is a Status naming line and column; the result is checked (undefined rules, left
// recursion, a root that can never complete) so a matcher can run it without guarding itself.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/sampler/grammar.h"

namespace ox {

// Resolves a token reference written as text (`<|im_end|>`, angle brackets included) to its id.
using TokenLookup = std::function<std::optional<int32_t>(std::string_view text)>;

struct GrammarParseOptions {
  std::string root = "root";
  TokenLookup lookup_token;  // empty: only <[id]> references parse
};

// Limits that keep hostile grammars (fuzz) from exhausting time, memory or the stack.
inline constexpr int kMaxGroupDepth = 200;               // nested ( ... )
inline constexpr uint64_t kMaxRepetition = 2000;          // llama.cpp's MAX_REPETITION_THRESHOLD
inline constexpr size_t kMaxGrammarElements = 1u << 22;  // all rules together

Result<Grammar> parse_grammar(std::string_view text, const GrammarParseOptions& options = {});

// The checks parse_grammar runs after parsing, for grammars built another way: every reference
// defined, no left recursion, and the root can derive at least one finite string.
Status check_grammar(const Grammar& grammar);

// "line L, column C" of a byte offset (1-based, columns in bytes).
std::string grammar_location(std::string_view text, size_t offset);

}  // namespace ox
