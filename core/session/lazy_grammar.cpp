// LazyGrammarConstraint: trigger search over the reply's text and the replay of its tokens into
// the grammar, the way llama.cpp's llama_grammar_accept_impl does while awaiting a trigger.
#include "core/session/lazy_grammar.h"

#include <algorithm>

#include "core/sampler/grammar_parser.h"

namespace ox {

Result<std::unique_ptr<LazyGrammarConstraint>> LazyGrammarConstraint::create(std::string_view gbnf,
                                                                             std::vector<GrammarTrigger> triggers,
                                                                             std::shared_ptr<const TokenTrie> trie,
                                                                             std::span<const int32_t> eog_ids) {
  if (trie == nullptr) return error(ErrorCode::kInvalidArgument, "lazy grammar: no vocabulary");
  for (const GrammarTrigger& t : triggers) {
    if (t.text.empty()) return error(ErrorCode::kInvalidArgument, "lazy grammar: an empty trigger");
    if (t.grammar_offset >= t.text.size()) {
      return error(ErrorCode::kInvalidArgument, "lazy grammar: trigger '" + t.text + "' starts its grammar past its end");
    }
  }
  GrammarParseOptions options;
  const TokenTrie* vocab = trie.get();
  options.lookup_token = [vocab](std::string_view text) { return vocab->find(text); };
  OX_ASSIGN_OR_RETURN(Grammar grammar, parse_grammar(gbnf, options));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<GrammarConstraint> g, GrammarConstraint::create(std::move(grammar), trie, eog_ids));
  return std::unique_ptr<LazyGrammarConstraint>(new LazyGrammarConstraint(std::move(g), std::move(triggers), std::move(trie)));
}

LazyGrammarConstraint::LazyGrammarConstraint(std::unique_ptr<GrammarConstraint> grammar, std::vector<GrammarTrigger> triggers,
                                             std::shared_ptr<const TokenTrie> trie)
    : grammar_(std::move(grammar)), triggers_(std::move(triggers)), trie_(std::move(trie)) {
  for (const GrammarTrigger& t : triggers_) max_trigger_ = std::max(max_trigger_, t.text.size());
}

void LazyGrammarConstraint::apply(std::span<TokenCandidate> candidates) {
  if (triggered_) grammar_->apply(candidates);
}

bool LazyGrammarConstraint::can_end() const { return !triggered_ || grammar_->can_end(); }

void LazyGrammarConstraint::reset() {
  grammar_->reset();
  triggered_ = false;
  text_.clear();
  tokens_.clear();
  token_begin_.clear();
  search_from_ = 0;
}

LazyGrammarConstraint::Hit LazyGrammarConstraint::find_trigger(size_t from) const {
  Hit best;
  const size_t lead = std::min(text_.find_first_not_of(" \t\r\n"), text_.size());
  for (const GrammarTrigger& t : triggers_) {
    size_t at = std::string::npos;
    if (t.at_start) {
      if (lead >= from && text_.compare(lead, t.text.size(), t.text) == 0) at = lead;
    } else {
      at = text_.find(t.text, from);
    }
    if (at < best.at) best = {at, at + t.grammar_offset};
  }
  return best;
}

bool LazyGrammarConstraint::replay(size_t start) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const size_t end = i + 1 < tokens_.size() ? token_begin_[i + 1] : text_.size();
    if (end <= start) continue;
    // A whole token goes in as the token (a control-token marker matches its <[id]> reference);
    // one the trigger starts inside of, as the rest of its text.
    const Status st = token_begin_[i] >= start ? grammar_->accept(tokens_[i])
                                               : grammar_->accept_text(std::string_view(text_).substr(start, end - start));
    if (!st.is_ok()) return false;
  }
  return true;
}

Status LazyGrammarConstraint::accept(int32_t token) {
  if (triggered_) return grammar_->accept(token);
  if (token < 0 || token >= trie_->n_vocab()) {
    return error(ErrorCode::kInvalidArgument, strfmt("lazy grammar: token %d is outside the vocabulary", token));
  }
  const size_t before = text_.size();
  tokens_.push_back(token);
  token_begin_.push_back(before);
  text_ += trie_->piece(token);
  // A trigger that ends in the new piece starts at most max_trigger_ - 1 bytes before it.
  size_t from = std::max(search_from_, before >= max_trigger_ ? before - max_trigger_ + 1 : 0);
  for (Hit hit = find_trigger(from); hit.at != std::string::npos; hit = find_trigger(from)) {
    if (replay(hit.grammar_at)) {
      triggered_ = true;
      text_.clear();
      tokens_.clear();
      token_begin_.clear();
      return Status::ok();
    }
    grammar_->reset();  // not a call after all: free text, look further on
    from = search_from_ = hit.at + 1;
  }
  return Status::ok();
}

}  // namespace ox
