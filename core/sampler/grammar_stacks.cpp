// GrammarStacks: llama.cpp's advance_stack / match_char / match_partial_char over interned stacks,
// with the per-(set, code point) results memoised. See grammar_stacks.h.
#include "core/sampler/grammar_stacks.h"

#include <algorithm>

#include "core/base/status.h"

namespace ox {
namespace {

constexpr uint32_t kUnknown = UINT32_MAX;

// llama_grammar_match_char: does code point cp satisfy the class starting at elems[pos]? Also
// returns the index just past the class.
std::pair<bool, uint32_t> match_char(const std::vector<GrammarElement>& elems, uint32_t pos, uint32_t cp) {
  const bool positive = elems[pos].op != GrammarOp::kCharNot;
  bool found = false;
  do {
    if (elems[pos + 1].op == GrammarOp::kCharRngUpper) {
      found = found || (elems[pos].value <= cp && cp <= elems[pos + 1].value);
      pos += 2;
    } else if (elems[pos].op == GrammarOp::kCharAny) {
      found = true;
      pos += 1;
    } else {
      found = found || elems[pos].value == cp;
      pos += 1;
    }
  } while (elems[pos].op == GrammarOp::kCharAlt);
  return {found == positive, pos};
}

// Could some completion of the partial sequence satisfy the class at elems[pos]? As
// llama_grammar_match_partial_char for positive classes; for a negated class llama.cpp refuses as
// soon as an excluded char lies in the range, we refuse only when the excluded chars cover it all.
bool match_partial_char(const std::vector<GrammarElement>& elems, uint32_t pos, PartialUtf8 partial) {
  const int n_remain = partial.n_remain;
  if (n_remain < 0 || (n_remain == 1 && partial.value < 2)) return false;  // invalid, or an overlong 7-bit char
  uint32_t low = partial.value << (n_remain * 6);
  const uint32_t high = low | ((1u << (n_remain * 6)) - 1);
  if (low == 0) {
    if (n_remain == 2) low = 1u << 11;
    if (n_remain == 3) low = 1u << 16;
  }
  const bool positive = elems[pos].op != GrammarOp::kCharNot;
  std::vector<std::pair<uint32_t, uint32_t>> excluded;
  do {
    uint32_t lo = elems[pos].value, hi = lo;
    if (elems[pos].op == GrammarOp::kCharAny) return true;
    if (elems[pos + 1].op == GrammarOp::kCharRngUpper) {
      hi = elems[pos + 1].value;
      pos += 2;
    } else {
      pos += 1;
    }
    if (lo <= high && low <= hi) {
      if (positive) return true;
      excluded.push_back({lo, hi});
    }
  } while (elems[pos].op == GrammarOp::kCharAlt);
  if (positive) return false;
  std::sort(excluded.begin(), excluded.end());
  uint64_t covered_to = low;  // every code point below this is excluded
  for (const auto& [lo, hi] : excluded) {
    if (lo > covered_to) return true;  // a gap: that code point is allowed
    covered_to = std::max<uint64_t>(covered_to, static_cast<uint64_t>(hi) + 1);
  }
  return covered_to <= high;
}

}  // namespace

GrammarStacks::GrammarStacks(const Grammar& grammar) : root_(grammar.root) {
  for (const std::vector<GrammarElement>& rule : grammar.rules) {
    rule_start_.push_back(static_cast<uint32_t>(elems_.size()));
    elems_.insert(elems_.end(), rule.begin(), rule.end());
  }
  reset_tables();
}

void GrammarStacks::reset_tables() {
  nodes_.assign(1, {kUnknown, 0});
  node_ids_.clear();
  sets_.assign(1, SetInfo{0, 0});
  set_members_.clear();
  set_ids_.clear();
  ascii_next_.clear();
  memo_.clear();
}

uint32_t GrammarStacks::push(uint32_t parent, uint32_t elem) {
  const uint64_t key = (static_cast<uint64_t>(parent) << 32) | elem;
  auto [it, inserted] = node_ids_.emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({elem, parent});
  return it->second;
}

// llama_grammar_advance_stack: expands rule references on top until every stack has a terminal
// on top (or is empty: the grammar is complete). Left recursion was refused by check_grammar, so
// the expansion is finite.
bool GrammarStacks::advance(uint32_t stack, std::vector<uint32_t>& out) {
  todo_.assign(1, stack);
  seen_.clear();
  while (!todo_.empty()) {
    if (out.size() > kMaxStacks || seen_.size() > 4 * kMaxStacks) {
      overflowed_ = true;
      return false;
    }
    const uint32_t cur = todo_.back();
    todo_.pop_back();
    if (!seen_.insert(cur).second) continue;
    if (cur == 0) {
      out.push_back(0);
      continue;
    }
    const uint32_t pos = nodes_[cur].elem;
    const GrammarElement e = elems_[pos];
    if (e.op != GrammarOp::kRuleRef) {
      out.push_back(cur);  // a char class or token element
      continue;
    }
    const uint32_t parent = nodes_[cur].parent;
    const uint32_t base = is_end_of_sequence(elems_[pos + 1].op) ? parent : push(parent, pos + 1);
    uint32_t alt = rule_start_[e.value];
    while (true) {
      todo_.push_back(is_end_of_sequence(elems_[alt].op) ? base : push(base, alt));
      while (!is_end_of_sequence(elems_[alt].op)) ++alt;
      if (elems_[alt].op != GrammarOp::kAlt) break;
      ++alt;
    }
  }
  return true;
}

uint32_t GrammarStacks::intern_set(std::vector<uint32_t>& stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.empty()) return kDead;
  std::string key(reinterpret_cast<const char*>(stacks.data()), stacks.size() * sizeof(uint32_t));
  auto [it, inserted] = set_ids_.emplace(std::move(key), static_cast<uint32_t>(sets_.size()));
  if (!inserted) return it->second;
  SetInfo info{static_cast<uint32_t>(set_members_.size()), static_cast<uint32_t>(stacks.size())};
  info.has_empty = stacks.front() == 0;
  for (uint32_t s : stacks) info.has_token_top = info.has_token_top || (s != 0 && is_token_op(elems_[nodes_[s].elem].op));
  set_members_.insert(set_members_.end(), stacks.begin(), stacks.end());
  sets_.push_back(info);
  return it->second;
}

uint32_t GrammarStacks::initial_set() {
  std::vector<uint32_t> out;
  uint32_t alt = rule_start_[root_];
  while (true) {  // one stack per alternative of the root, as llama_grammar_init_impl
    if (!advance(is_end_of_sequence(elems_[alt].op) ? 0 : push(0, alt), out)) return kDead;
    while (!is_end_of_sequence(elems_[alt].op)) ++alt;
    if (elems_[alt].op != GrammarOp::kAlt) break;
    ++alt;
  }
  return intern_set(out);
}

uint32_t GrammarStacks::compute_step_char(uint32_t set, uint32_t cp) {
  std::vector<uint32_t> out;
  for (uint32_t s : members(set)) {
    if (s == 0 || !is_char_op(elems_[nodes_[s].elem].op)) continue;  // complete, or waiting for a token
    const auto [ok, next] = match_char(elems_, nodes_[s].elem, cp);
    if (!ok) continue;
    const uint32_t parent = nodes_[s].parent;
    if (!advance(is_end_of_sequence(elems_[next].op) ? parent : push(parent, next), out)) return kDead;
  }
  return intern_set(out);
}

uint32_t GrammarStacks::step_char(uint32_t set, uint32_t cp) {
  if (set == kDead) return kDead;
  if (cp < 128) {
    if (sets_[set].ascii < 0) {
      sets_[set].ascii = static_cast<int32_t>(ascii_next_.size());
      ascii_next_.resize(ascii_next_.size() + 128, kUnknown);
    }
    const size_t slot = static_cast<size_t>(sets_[set].ascii) + cp;
    if (ascii_next_[slot] == kUnknown) {
      const uint32_t next = compute_step_char(set, cp);
      ascii_next_[static_cast<size_t>(sets_[set].ascii) + cp] = next;  // the vector may have grown
    }
    return ascii_next_[static_cast<size_t>(sets_[set].ascii) + cp];
  }
  const uint64_t key = (static_cast<uint64_t>(set) << 32) | (cp & 0x7FFFFFFFu);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  const uint32_t next = compute_step_char(set, cp);
  memo_.emplace(key, next);
  return next;
}

bool GrammarStacks::partial_ok(uint32_t set, PartialUtf8 partial) {
  const uint64_t key = (static_cast<uint64_t>(set) << 32) | 0x80000000u |
                       (static_cast<uint32_t>(partial.n_remain) << 24) | (partial.value & 0xFFFFFF);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second != 0;
  bool ok = false;
  for (uint32_t s : members(set)) {
    if (s != 0 && is_char_op(elems_[nodes_[s].elem].op) && match_partial_char(elems_, nodes_[s].elem, partial)) {
      ok = true;
      break;
    }
  }
  memo_.emplace(key, ok ? 1u : 0u);
  return ok;
}

// UTF-8 decoding as llama.cpp's decode_utf8, one byte at a time: a lead byte fixes the number of
// continuation bytes; an unexpected byte kills the state (llama.cpp rejects such tokens).
GrammarState GrammarStacks::step_byte(GrammarState state, uint8_t byte) {
  static const int kLength[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
  if (state.set == kDead) return {};
  PartialUtf8 p = state.partial;
  if (p.n_remain > 0) {
    if ((byte >> 6) != 2) return {};
    p.value = (p.value << 6) + (byte & 0x3F);
    --p.n_remain;
  } else {
    p.n_remain = kLength[byte >> 4] - 1;
    if (p.n_remain < 0) return {};
    p.value = byte & ((1u << (7 - p.n_remain)) - 1);
  }
  if (p.n_remain == 0) return {step_char(state.set, p.value), {}};
  if (!partial_ok(state.set, p)) return {};
  return {state.set, p};
}

uint32_t GrammarStacks::step_token(uint32_t set, int32_t token) {
  std::vector<uint32_t> out;
  for (uint32_t s : members(set)) {
    if (s == 0) continue;
    const uint32_t pos = nodes_[s].elem;
    const GrammarElement e = elems_[pos];
    if (!is_token_op(e.op)) continue;
    const bool same = e.value == static_cast<uint32_t>(token);
    if (same != (e.op == GrammarOp::kToken)) continue;
    const uint32_t parent = nodes_[s].parent;
    if (!advance(is_end_of_sequence(elems_[pos + 1].op) ? parent : push(parent, pos + 1), out)) return kDead;
  }
  return intern_set(out);
}

uint32_t GrammarStacks::merge(uint32_t a, uint32_t b) {
  std::vector<uint32_t> all = members(a);
  const std::vector<uint32_t> more = members(b);
  all.insert(all.end(), more.begin(), more.end());
  return intern_set(all);
}

std::vector<GrammarElement> GrammarStacks::token_tops(uint32_t set) const {
  std::vector<GrammarElement> out;
  for (uint32_t s : members(set)) {
    if (s != 0 && is_token_op(elems_[nodes_[s].elem].op)) out.push_back(elems_[nodes_[s].elem]);
  }
  return out;
}

uint32_t GrammarStacks::compact(uint32_t live) {
  std::vector<std::vector<uint32_t>> stacks;  // each live stack's elements, bottom first
  for (uint32_t s : members(live)) {
    std::vector<uint32_t> elems;
    for (uint32_t cur = s; cur != 0; cur = nodes_[cur].parent) elems.push_back(nodes_[cur].elem);
    std::reverse(elems.begin(), elems.end());
    stacks.push_back(std::move(elems));
  }
  reset_tables();
  std::vector<uint32_t> ids;
  for (const std::vector<uint32_t>& elems : stacks) {
    uint32_t id = 0;
    for (uint32_t e : elems) id = push(id, e);
    ids.push_back(id);
  }
  return intern_set(ids);
}

}  // namespace ox
