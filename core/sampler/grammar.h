// The compiled form of a GBNF grammar: llama.cpp's element encoding (rules as flat element lists
// with ALT separators and an END terminator), so its matching semantics carry over one for one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ox {

enum class GrammarOp : uint8_t {
  kEnd,           // end of a rule
  kAlt,           // start of another alternative of the same rule
  kRuleRef,       // value: rule index
  kChar,          // value: code point; starts a character class (alone: a literal char)
  kCharNot,       // value: code point; starts a negated class [^...]
  kCharRngUpper,  // value: inclusive upper bound of the range started by the previous element
  kCharAlt,       // value: another code point (or range start) of the current class
  kCharAny,       // '.': any code point
  kToken,         // value: token id (<[id]> or <|name|>)
  kTokenNot,      // value: token id (!<[id]>): any single token but this one
};

struct GrammarElement {
  GrammarOp op;
  uint32_t value;
  bool operator==(const GrammarElement&) const = default;
};

struct Grammar {
  // rules[i] is one rule's alternatives, kAlt-separated, ending with kEnd.
  std::vector<std::vector<GrammarElement>> rules;
  std::vector<std::string> rule_names;  // same index as rules (generated ones: name_N)
  uint32_t root = 0;
};

inline bool is_char_op(GrammarOp op) {
  return op == GrammarOp::kChar || op == GrammarOp::kCharNot || op == GrammarOp::kCharAny;
}
inline bool is_token_op(GrammarOp op) { return op == GrammarOp::kToken || op == GrammarOp::kTokenNot; }
inline bool is_end_of_sequence(GrammarOp op) { return op == GrammarOp::kEnd || op == GrammarOp::kAlt; }

}  // namespace ox
