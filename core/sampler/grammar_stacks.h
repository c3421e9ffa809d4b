// The pushdown-stack machine behind a grammar constraint, llama.cpp's algorithm with shared state:
// stacks are hash-consed (a stack is an id: top element + id of the stack below), a set of stacks
// is an id too, and the transition (set, code point) -> set is memoised. Masking a vocabulary then
// costs about one table lookup per trie node once the grammar's states have been seen.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/sampler/grammar.h"

namespace ox {

// An incomplete UTF-8 sequence carried between bytes (and between tokens): value so far and the
// number of continuation bytes still expected (0: none pending).
struct PartialUtf8 {
  uint32_t value = 0;
  int n_remain = 0;
  bool operator==(const PartialUtf8&) const = default;
};

// A position of the matcher: a set of stacks (0: dead, nothing can follow) and a pending partial char.
struct GrammarState {
  uint32_t set = 0;
  PartialUtf8 partial;
  bool operator==(const GrammarState&) const = default;
};

class GrammarStacks {
 public:
  static constexpr uint32_t kDead = 0;  // the empty set of stacks
  // At most this many stacks in one set, and stack expansions in one advance. Nested repetitions
  // ("x++++...", or rules of rules of "+") make the number of parse stacks grow exponentially
  // with the text; past the budget a step yields the dead set and overflowed() says why, instead
  // of the walk taking minutes (a fuzzed grammar did).
  static constexpr size_t kMaxStacks = 1u << 13;

  explicit GrammarStacks(const Grammar& grammar);

  uint32_t initial_set();
  // One byte of text; returns a dead state when no stack can take it (or the UTF-8 is invalid).
  GrammarState step_byte(GrammarState state, uint8_t byte);
  // A whole token through the token elements (<[id]>, !<[id]>) on top of the stacks.
  uint32_t step_token(uint32_t set, int32_t token);
  uint32_t merge(uint32_t a, uint32_t b);

  bool can_end(uint32_t set) const { return sets_[set].has_empty; }
  bool has_token_tops(uint32_t set) const { return sets_[set].has_token_top; }
  // Token elements on top of the set's stacks: (op, id) pairs for kToken / kTokenNot.
  std::vector<GrammarElement> token_tops(uint32_t set) const;
  size_t n_stack_nodes() const { return nodes_.size(); }
  // Some step needed more than kMaxStacks stacks (sticky).
  bool overflowed() const { return overflowed_; }
  // Drops every stack and memo entry not needed by `live` (a set id); returns its new id.
  uint32_t compact(uint32_t live);

 private:
  struct StackNode {
    uint32_t elem;    // index into elems_ of the element on top
    uint32_t parent;  // stack below (0: the empty stack)
  };
  struct SetInfo {
    uint32_t begin, count;  // members in set_members_, sorted stack ids
    int32_t ascii = -1;     // offset of this set's 128-entry transition row in ascii_next_
    bool has_empty = false, has_token_top = false;
  };

  uint32_t push(uint32_t parent, uint32_t elem);
  // False (and overflowed_ set) when the expansion passed kMaxStacks.
  bool advance(uint32_t stack, std::vector<uint32_t>& out);
  uint32_t intern_set(std::vector<uint32_t>& stacks);
  uint32_t step_char(uint32_t set, uint32_t cp);
  uint32_t compute_step_char(uint32_t set, uint32_t cp);
  bool partial_ok(uint32_t set, PartialUtf8 partial);
  void reset_tables();
  std::vector<uint32_t> members(uint32_t set) const {
    return {set_members_.begin() + sets_[set].begin, set_members_.begin() + sets_[set].begin + sets_[set].count};
  }

  std::vector<GrammarElement> elems_;  // all rules, concatenated
  std::vector<uint32_t> rule_start_;
  uint32_t root_;

  std::vector<StackNode> nodes_;  // nodes_[0]: the empty stack
  std::unordered_map<uint64_t, uint32_t> node_ids_;
  std::vector<SetInfo> sets_;     // sets_[0]: the dead set
  std::vector<uint32_t> set_members_;
  std::unordered_map<std::string, uint32_t> set_ids_;
  std::vector<uint32_t> ascii_next_;                 // memo for code points < 128
  std::unordered_map<uint64_t, uint32_t> memo_;      // other code points, and partial-char checks
  std::vector<uint32_t> todo_;                       // advance()'s scratch
  std::unordered_set<uint32_t> seen_;
  bool overflowed_ = false;
};

}  // namespace ox
