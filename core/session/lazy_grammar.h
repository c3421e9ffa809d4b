// A lazy grammar, as llama.cpp's (grammar_lazy with trigger words and patterns): the reply is free
// until one of the trigger texts appears in it, then the grammar holds from the trigger's first
// byte (or a set offset into it) on (tool calls under tool_choice "auto": free text, or a call
// that must be well formed).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/constraint.h"
#include "core/sampler/grammar_constraint.h"
#include "core/sampler/token_trie.h"

namespace ox {

struct GrammarTrigger {
  std::string text;
  // Only where the reply starts with it (after whitespace), as llama.cpp's full-match patterns
  // for formats whose call is bare JSON (Llama 3.x `{"name": ...}`): JSON inside prose is content.
  bool at_start = false;
  // Where in the trigger the grammar starts, as the first capture group of llama.cpp's pattern
  // triggers: Functionary v3.2's ">>>NAME\n" starts a grammar whose calls begin at NAME (3).
  // Less than text's size.
  size_t grammar_offset = 0;
};

class LazyGrammarConstraint final : public TokenConstraint {
 public:
  // `gbnf`'s root must match the reply from a trigger's first byte to its end.
  static Result<std::unique_ptr<LazyGrammarConstraint>> create(std::string_view gbnf, std::vector<GrammarTrigger> triggers,
                                                               std::shared_ptr<const TokenTrie> trie,
                                                               std::span<const int32_t> eog_ids);

  void apply(std::span<TokenCandidate> candidates) override;
  // Before a trigger: records the token's piece and looks for a trigger; on one, the tokens from
  // its first byte are replayed into the grammar (a token the trigger starts inside of: its
  // piece's tail as text). If the grammar refuses them, the reply stays free and the search goes on
  // after that trigger (a marker in prose is not a call). Never an error before a trigger.
  Status accept(int32_t token) override;
  bool can_end() const override;
  void reset() override;

  bool triggered() const { return triggered_; }

 private:
  LazyGrammarConstraint(std::unique_ptr<GrammarConstraint> grammar, std::vector<GrammarTrigger> triggers,
                        std::shared_ptr<const TokenTrie> trie);
  // The first trigger at or after byte `from` of the text so far (npos if none), and where in
  // the text its grammar starts.
  struct Hit {
    size_t at = std::string::npos;
    size_t grammar_at = std::string::npos;
  };
  Hit find_trigger(size_t from) const;
  bool replay(size_t start);

  std::unique_ptr<GrammarConstraint> grammar_;
  std::vector<GrammarTrigger> triggers_;
  std::shared_ptr<const TokenTrie> trie_;
  size_t max_trigger_ = 0;
  bool triggered_ = false;
  std::string text_;                 // the reply so far, while not triggered
  std::vector<int32_t> tokens_;      // its tokens
  std::vector<size_t> token_begin_;  // where each starts in text_
  size_t search_from_ = 0;           // no trigger starts before this byte (or it was refused)
};

}  // namespace ox
