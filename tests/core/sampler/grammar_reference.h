// A deliberately naive grammar matcher for the tests: llama.cpp's algorithm written out directly
// (stacks as vectors of element indices, a std::set per advance, tokens decoded whole), with no
// interning, memo or trie. The fast matcher's masks must equal its token-by-token answers.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/sampler/grammar.h"

namespace ox::test {

class ReferenceMatcher {
 public:
  using Stack = std::vector<uint32_t>;

  explicit ReferenceMatcher(const Grammar& g) {
    for (const auto& rule : g.rules) {
      start_.push_back(static_cast<uint32_t>(el_.size()));
      el_.insert(el_.end(), rule.begin(), rule.end());
    }
    uint32_t alt = start_[g.root];
    while (true) {
      advance(end_of_seq(alt) ? Stack{} : Stack{alt}, stacks_);
      while (!end_of_seq(alt)) ++alt;
      if (el_[alt].op != GrammarOp::kAlt) break;
      ++alt;
    }
  }

  size_t n_stacks() const { return stacks_.size(); }

  bool can_end() const {
    return n_remain_ == 0 && std::find(stacks_.begin(), stacks_.end(), Stack{}) != stacks_.end();
  }

  // Feeds bytes (a token's piece); false (and no change) if the grammar rejects them.
  bool accept_bytes(const std::string& bytes) {
    std::vector<Stack> cur = stacks_;
    uint32_t value = value_;
    int n_remain = n_remain_;
    for (unsigned char b : bytes) {
      if (n_remain > 0) {
        if ((b >> 6) != 2) return false;
        value = (value << 6) + (b & 0x3F);
        --n_remain;
      } else {
        static const int kLen[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
        n_remain = kLen[b >> 4] - 1;
        if (n_remain < 0) return false;
        value = b & ((1u << (7 - n_remain)) - 1);
      }
      if (n_remain == 0) {
        cur = accept_char(cur, value);
        if (cur.empty()) return false;
      }
    }
    if (n_remain > 0) {  // the token ends inside a character: some stack must be able to finish it
      bool any = false;
      for (const Stack& s : cur) any = any || (!s.empty() && is_char_op(el_[s.back()].op) && partial_ok(s.back(), value, n_remain));
      if (!any) return false;
    }
    stacks_ = cur;
    value_ = value;
    n_remain_ = n_remain;
    return true;
  }

  // A sampled token: its text through the char elements (if it is text) and the token elements;
  // both paths surviving merge, as GrammarConstraint::accept does.
  bool accept_token(int32_t id, const std::string& piece, bool is_text) {
    ReferenceMatcher a = *this, b = *this;
    const bool ok_a = is_text && a.accept_bytes(piece);
    const bool ok_b = b.accept_token_id(id);
    if (!ok_a && !ok_b) return false;
    if (ok_a && ok_b && a.n_remain_ == 0) {
      for (const Stack& s : b.stacks_) {
        if (std::find(a.stacks_.begin(), a.stacks_.end(), s) == a.stacks_.end()) a.stacks_.push_back(s);
      }
      *this = a;
    } else {
      *this = ok_b ? b : a;
    }
    return true;
  }

  // Whole-token elements (<[id]>, !<[id]>) at a token boundary.
  bool accept_token_id(int32_t id) {
    if (n_remain_ != 0) return false;
    std::vector<Stack> out;
    for (const Stack& s : stacks_) {
      if (s.empty() || !is_token_op(el_[s.back()].op)) continue;
      const GrammarElement e = el_[s.back()];
      if ((e.value == static_cast<uint32_t>(id)) != (e.op == GrammarOp::kToken)) continue;
      Stack next(s.begin(), s.end() - 1);
      if (!end_of_seq(s.back() + 1)) next.push_back(s.back() + 1);
      advance(next, out);
    }
    if (out.empty()) return false;
    stacks_ = out;
    return true;
  }

 private:
  bool end_of_seq(uint32_t pos) const { return is_end_of_sequence(el_[pos].op); }

  void advance(const Stack& stack, std::vector<Stack>& out) const {
    std::vector<Stack> todo = {stack};
    std::set<Stack> seen, added(out.begin(), out.end());
    while (!todo.empty()) {
      Stack cur = todo.back();
      todo.pop_back();
      if (!seen.insert(cur).second) continue;
      if (cur.empty() || el_[cur.back()].op != GrammarOp::kRuleRef) {
        if (added.insert(cur).second) out.push_back(cur);
        continue;
      }
      const uint32_t pos = cur.back();
      uint32_t alt = start_[el_[pos].value];
      while (true) {
        Stack next(cur.begin(), cur.end() - 1);
        if (!end_of_seq(pos + 1)) next.push_back(pos + 1);
        if (!end_of_seq(alt)) next.push_back(alt);
        todo.push_back(next);
        while (!end_of_seq(alt)) ++alt;
        if (el_[alt].op != GrammarOp::kAlt) break;
        ++alt;
      }
    }
  }

  std::pair<bool, uint32_t> match(uint32_t pos, uint32_t c) const {
    const bool positive = el_[pos].op != GrammarOp::kCharNot;
    bool found = false;
    do {
      if (el_[pos + 1].op == GrammarOp::kCharRngUpper) {
        found = found || (el_[pos].value <= c && c <= el_[pos + 1].value);
        pos += 2;
      } else {
        found = found || el_[pos].op == GrammarOp::kCharAny || el_[pos].value == c;
        pos += 1;
      }
    } while (el_[pos].op == GrammarOp::kCharAlt);
    return {found == positive, pos};
  }

  // Brute force over every code point the partial sequence can still become.
  bool partial_ok(uint32_t pos, uint32_t value, int n_remain) const {
    if (n_remain == 1 && value < 2) return false;
    uint32_t low = value << (6 * n_remain), high = low | ((1u << (6 * n_remain)) - 1);
    if (low == 0 && n_remain == 2) low = 1u << 11;
    if (low == 0 && n_remain == 3) low = 1u << 16;
    for (uint32_t c = low; c <= high; ++c) {
      if (match(pos, c).first) return true;
    }
    return false;
  }

  std::vector<Stack> accept_char(const std::vector<Stack>& stacks, uint32_t c) const {
    std::vector<Stack> out;
    for (const Stack& s : stacks) {
      if (s.empty() || !is_char_op(el_[s.back()].op)) continue;
      auto [ok, next_pos] = match(s.back(), c);
      if (!ok) continue;
      Stack next(s.begin(), s.end() - 1);
      if (!end_of_seq(next_pos)) next.push_back(next_pos);
      advance(next, out);
    }
    return out;
  }

  std::vector<GrammarElement> el_;
  std::vector<uint32_t> start_;
  std::vector<Stack> stacks_;
  uint32_t value_ = 0;
  int n_remain_ = 0;
};

}  // namespace ox::test
