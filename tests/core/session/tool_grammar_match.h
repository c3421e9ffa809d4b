// For the tool-grammar tests: whether a GBNF grammar matches a text whole, over a vocabulary of
// single bytes (so markers are text).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sampler/grammar_constraint.h"
#include "core/sampler/grammar_parser.h"

namespace ox::test {

inline bool grammar_matches(const std::string& gbnf, const std::string& text) {
  Result<Grammar> g = parse_grammar(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message() << "\n" << gbnf;
  if (!g.ok()) return false;
  std::vector<std::string> pieces;
  for (int c = 1; c < 256; ++c) pieces.push_back(std::string(1, static_cast<char>(c)));
  auto c = GrammarConstraint::create(std::move(g).value(), TokenTrie::build(pieces, {}), std::vector<int32_t>{});
  EXPECT_TRUE(c.ok());
  if (!c.ok()) return false;
  return (*c)->accept_text(text).is_ok() && (*c)->can_end();
}

}  // namespace ox::test
