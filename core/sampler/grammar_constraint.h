// GrammarConstraint: a TokenConstraint that allows only tokens continuing a sentence of a GBNF
// grammar. Masks are computed by walking the vocabulary's TokenTrie with the grammar's stack
// machine (GrammarStacks), pruning every prefix the grammar rejects.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/constraint.h"
#include "core/sampler/grammar.h"
#include "core/sampler/grammar_stacks.h"
#include "core/sampler/token_trie.h"

namespace ox {

class GrammarConstraint final : public TokenConstraint {
 public:
  // eog_ids: end-of-generation tokens, allowed exactly when can_end() (or named by a token element).
  static Result<std::unique_ptr<GrammarConstraint>> create(Grammar grammar, std::shared_ptr<const TokenTrie> trie,
                                                           std::span<const int32_t> eog_ids);

  void apply(std::span<TokenCandidate> candidates) override;
  Status accept(int32_t token) override;
  bool can_end() const override;
  void reset() override;
  std::string why_nothing_allowed() const override;

  // Whether each token of the vocabulary may come next (1) or not (0), from one trie walk; cached
  // until the next accept()/reset().
  const std::vector<uint8_t>& allowed_tokens();
  // The same answer for one token, by feeding its piece alone (cheap for short candidate lists).
  bool is_allowed(int32_t token);
  // Feeds text through the grammar without tokens (tests, and prompts the model did not sample).
  Status accept_text(std::string_view text);

 private:
  GrammarConstraint(Grammar grammar, std::shared_ptr<const TokenTrie> trie, std::vector<int32_t> eog_ids);
  GrammarState feed(GrammarState state, std::string_view bytes);
  bool token_element_allows(int32_t token);
  bool is_eog(int32_t token) const;
  void compute_mask();

  Grammar grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::vector<int32_t> eog_ids_;
  GrammarStacks stacks_;
  uint32_t initial_set_ = 0;
  GrammarState state_;
  std::vector<uint8_t> mask_;
  bool mask_valid_ = false;
  // Masks of recent states: the mask is a function of the state alone, and a state recurs (every
  // character inside a JSON string leaves the same stacks). Cleared when compact() renumbers sets.
  struct CachedMask {
    GrammarState state;
    std::vector<uint8_t> mask;
  };
  std::vector<CachedMask> mask_cache_;
  size_t mask_cache_next_ = 0;  // the entry replaced next once the cache is full
  std::vector<GrammarState> walk_;  // trie walk's state per depth
};

// Parses `gbnf` (token references resolved against the trie's pieces) and builds a constraint.
Result<std::unique_ptr<TokenConstraint>> make_grammar_constraint(std::string_view gbnf,
                                                                 std::shared_ptr<const TokenTrie> trie,
                                                                 std::span<const int32_t> eog_ids,
                                                                 const std::string& root = "root");

}  // namespace ox
