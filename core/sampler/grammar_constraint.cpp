// GrammarConstraint: the vocabulary mask from one pre-order walk of the TokenTrie, carrying a
// GrammarState per depth; a prefix the grammar rejects skips its subtree. Token elements of the
// grammar (<[id]>, !<[id]>) and end-of-generation tokens are decided by id, outside the trie.
#include "core/sampler/grammar_constraint.h"

#include <algorithm>
#include <cmath>

#include "core/sampler/grammar_parser.h"

namespace ox {
namespace {

// Past this many interned stack nodes, accept() drops the stacks the current state no longer
// needs (memory of long generations stays bounded).
constexpr size_t kCompactAtNodes = 1u << 20;
// Candidate lists up to this size are checked token by token instead of masking the vocabulary.
constexpr size_t kPerTokenCandidates = 256;
// Masks kept per constraint (each n_vocab bytes: 1.2 MB for 151k tokens).
constexpr size_t kMaskCacheEntries = 8;

}  // namespace

GrammarConstraint::GrammarConstraint(Grammar grammar, std::shared_ptr<const TokenTrie> trie, std::vector<int32_t> eog_ids)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), eog_ids_(std::move(eog_ids)), stacks_(grammar_) {
  initial_set_ = stacks_.initial_set();
  state_ = {initial_set_, {}};
  uint32_t max_depth = 0;
  for (const TokenTrie::Node& n : trie_->nodes()) max_depth = std::max(max_depth, n.depth);
  walk_.resize(max_depth + 1);
}

Result<std::unique_ptr<GrammarConstraint>> GrammarConstraint::create(Grammar grammar, std::shared_ptr<const TokenTrie> trie,
                                                                     std::span<const int32_t> eog_ids) {
  if (trie == nullptr) return error(ErrorCode::kInvalidArgument, "grammar constraint: no vocabulary");
  OX_TRY(check_grammar(grammar));
  for (const std::vector<GrammarElement>& rule : grammar.rules) {
    for (const GrammarElement& e : rule) {
      if (is_token_op(e.op) && e.value >= static_cast<uint32_t>(trie->n_vocab())) {
        return error(ErrorCode::kInvalidArgument, strfmt("grammar: token <[%u]> outside the vocabulary (n_vocab %d)",
                                                         e.value, trie->n_vocab()));
      }
    }
  }
  std::vector<int32_t> eog;
  for (int32_t id : eog_ids) {
    if (id >= 0 && id < trie->n_vocab()) eog.push_back(id);
  }
  std::unique_ptr<GrammarConstraint> made(new GrammarConstraint(std::move(grammar), std::move(trie), std::move(eog)));
  if (made->initial_set_ == GrammarStacks::kDead && made->stacks_.overflowed()) {
    return error(ErrorCode::kInvalidArgument, made->why_nothing_allowed());
  }
  return made;
}

std::string GrammarConstraint::why_nothing_allowed() const {
  if (!stacks_.overflowed()) return {};
  return strfmt("the grammar is too ambiguous: a step needed more than %zu parse stacks (nested repetitions such "
                "as \"x++\", or rules of rules of \"+\", multiply them with every character)",
                GrammarStacks::kMaxStacks);
}

bool GrammarConstraint::is_eog(int32_t token) const {
  return std::find(eog_ids_.begin(), eog_ids_.end(), token) != eog_ids_.end();
}

bool GrammarConstraint::can_end() const { return state_.partial.n_remain == 0 && stacks_.can_end(state_.set); }

void GrammarConstraint::reset() {
  state_ = {initial_set_, {}};
  mask_valid_ = false;
}

GrammarState GrammarConstraint::feed(GrammarState state, std::string_view bytes) {
  for (char c : bytes) {
    state = stacks_.step_byte(state, static_cast<uint8_t>(c));
    if (state.set == GrammarStacks::kDead) break;
  }
  return state;
}

// A token element on top of a stack that takes this token whole. llama.cpp only matches them at
// a token boundary with no partial character pending; end-of-generation tokens need <[id]> itself.
bool GrammarConstraint::token_element_allows(int32_t token) {
  if (state_.partial.n_remain != 0 || !stacks_.has_token_tops(state_.set)) return false;
  for (const GrammarElement& e : stacks_.token_tops(state_.set)) {
    const bool same = e.value == static_cast<uint32_t>(token);
    if (e.op == GrammarOp::kToken ? same : (!same && !is_eog(token) && !trie_->piece(token).empty())) return true;
  }
  return false;
}

bool GrammarConstraint::is_allowed(int32_t token) {
  if (token < 0 || token >= trie_->n_vocab()) return false;
  if (is_eog(token)) return can_end() || token_element_allows(token);
  if (token_element_allows(token)) return true;
  return trie_->in_trie(token) && feed(state_, trie_->piece(token)).set != GrammarStacks::kDead;
}

void GrammarConstraint::compute_mask() {
  for (const CachedMask& c : mask_cache_) {
    if (c.state == state_) {
      mask_ = c.mask;
      mask_valid_ = true;
      return;
    }
  }
  const int32_t n_vocab = trie_->n_vocab();
  mask_.assign(static_cast<size_t>(n_vocab), 0);
  if (state_.set != GrammarStacks::kDead) {
    const std::span<const TokenTrie::Node> nodes = trie_->nodes();
    const std::span<const int32_t> ids = trie_->token_ids();
    walk_[0] = state_;
    for (size_t i = 0; i < nodes.size();) {
      const TokenTrie::Node& node = nodes[i];
      const GrammarState next = stacks_.step_byte(walk_[node.depth - 1], node.byte);
      if (next.set == GrammarStacks::kDead) {
        i = node.subtree_end;  // no token with this prefix can follow
        continue;
      }
      walk_[node.depth] = next;
      for (uint32_t k = 0; k < node.n_tokens; ++k) mask_[static_cast<size_t>(ids[node.token_begin + k])] = 1;
      ++i;
    }
  }
  if (state_.partial.n_remain == 0 && stacks_.has_token_tops(state_.set)) {
    for (const GrammarElement& e : stacks_.token_tops(state_.set)) {
      if (e.op == GrammarOp::kToken) {
        mask_[e.value] = 1;
        continue;
      }
      for (int32_t id = 0; id < n_vocab; ++id) {
        if (static_cast<uint32_t>(id) != e.value && !trie_->piece(id).empty()) mask_[static_cast<size_t>(id)] = 1;
      }
    }
  }
  for (int32_t id : eog_ids_) mask_[static_cast<size_t>(id)] = (can_end() || token_element_allows(id)) ? 1 : 0;
  mask_valid_ = true;
  if (mask_cache_.size() < kMaskCacheEntries) {
    mask_cache_.push_back({state_, mask_});
  } else {
    mask_cache_[mask_cache_next_] = {state_, mask_};
    mask_cache_next_ = (mask_cache_next_ + 1) % kMaskCacheEntries;
  }
}

const std::vector<uint8_t>& GrammarConstraint::allowed_tokens() {
  if (!mask_valid_) compute_mask();
  return mask_;
}

void GrammarConstraint::apply(std::span<TokenCandidate> candidates) {
  const float kNegInf = -INFINITY;
  if (!mask_valid_ && candidates.size() <= kPerTokenCandidates) {
    for (TokenCandidate& c : candidates) {
      if (!is_allowed(c.id)) c.logit = kNegInf;
    }
    return;
  }
  const std::vector<uint8_t>& mask = allowed_tokens();
  for (TokenCandidate& c : candidates) {
    if (c.id < 0 || c.id >= trie_->n_vocab() || mask[static_cast<size_t>(c.id)] == 0) c.logit = kNegInf;
  }
}

Status GrammarConstraint::accept(int32_t token) {
  if (token < 0 || token >= trie_->n_vocab()) {
    return error(ErrorCode::kInvalidArgument, strfmt("grammar: token %d outside the vocabulary (n_vocab %d)", token, trie_->n_vocab()));
  }
  const bool by_element = token_element_allows(token);
  const uint32_t token_set = by_element ? stacks_.step_token(state_.set, token) : GrammarStacks::kDead;
  GrammarState text_state;
  if (is_eog(token)) {
    if (token_set == GrammarStacks::kDead && !can_end()) {
      return error(ErrorCode::kInvalidArgument, strfmt("grammar: end-of-generation token %d before the grammar is complete", token));
    }
    if (token_set == GrammarStacks::kDead) return Status::ok();  // generation ends here; the state stays
  } else if (trie_->in_trie(token)) {
    text_state = feed(state_, trie_->piece(token));
  }
  if (token_set == GrammarStacks::kDead && text_state.set == GrammarStacks::kDead) {
    return error(ErrorCode::kInvalidArgument, strfmt("grammar: token %d is not allowed here", token));
  }
  if (text_state.set == GrammarStacks::kDead) {
    state_ = {token_set, {}};
  } else if (token_set != GrammarStacks::kDead && text_state.partial.n_remain == 0) {
    state_ = {stacks_.merge(token_set, text_state.set), {}};
  } else if (token_set != GrammarStacks::kDead) {
    state_ = {token_set, {}};  // both matched but the text left a partial char: the token element wins
  } else {
    state_ = text_state;
  }
  mask_valid_ = false;
  if (stacks_.n_stack_nodes() > kCompactAtNodes) {
    state_.set = stacks_.compact(state_.set);
    initial_set_ = stacks_.initial_set();
    mask_cache_.clear();  // set numbers changed
    mask_cache_next_ = 0;
  }
  return Status::ok();
}

Status GrammarConstraint::accept_text(std::string_view text) {
  const GrammarState next = feed(state_, text);
  if (next.set == GrammarStacks::kDead) return error(ErrorCode::kInvalidArgument, "grammar: text is not allowed here");
  state_ = next;
  mask_valid_ = false;
  return Status::ok();
}

Result<std::unique_ptr<TokenConstraint>> make_grammar_constraint(std::string_view gbnf, std::shared_ptr<const TokenTrie> trie,
                                                                 std::span<const int32_t> eog_ids, const std::string& root) {
  if (trie == nullptr) return error(ErrorCode::kInvalidArgument, "grammar constraint: no vocabulary");
  GrammarParseOptions options;
  options.root = root;
  const TokenTrie* vocab = trie.get();
  options.lookup_token = [vocab](std::string_view text) { return vocab->find(text); };
  OX_ASSIGN_OR_RETURN(Grammar grammar, parse_grammar(gbnf, options));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<GrammarConstraint> constraint,
                      GrammarConstraint::create(std::move(grammar), std::move(trie), eog_ids));
  return std::unique_ptr<TokenConstraint>(std::move(constraint));
}

}  // namespace ox
