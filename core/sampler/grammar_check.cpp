// Static checks of a parsed grammar, so that matching can never loop or stall: element lists well
// formed, no left recursion (which would make stack expansion grow forever), and a root that can
// derive a finite string. Everything is iterative: deep rule chains cannot overflow the stack.
#include <vector>

#include "core/sampler/grammar_parser.h"

namespace ox {
namespace {

Status check_structure(const Grammar& g) {
  if (g.rules.empty() || g.root >= g.rules.size()) return error(ErrorCode::kInvalidArgument, "grammar: no root rule");
  for (size_t r = 0; r < g.rules.size(); ++r) {
    const std::vector<GrammarElement>& rule = g.rules[r];
    const std::string name = r < g.rule_names.size() ? g.rule_names[r] : std::to_string(r);
    if (rule.empty() || rule.back().op != GrammarOp::kEnd) {
      return error(ErrorCode::kInvalidArgument, "grammar: rule '" + name + "' does not end with END");
    }
    for (size_t i = 0; i + 1 < rule.size(); ++i) {
      const GrammarElement e = rule[i];
      if (e.op == GrammarOp::kEnd) return error(ErrorCode::kInvalidArgument, "grammar: rule '" + name + "' has END inside");
      if (e.op == GrammarOp::kRuleRef && e.value >= g.rules.size()) {
        return error(ErrorCode::kInvalidArgument, "grammar: rule '" + name + "' references undefined rule " + std::to_string(e.value));
      }
      if ((e.op == GrammarOp::kCharAlt || e.op == GrammarOp::kCharRngUpper) &&
          (i == 0 || !(is_char_op(rule[i - 1].op) || rule[i - 1].op == GrammarOp::kCharAlt ||
                       rule[i - 1].op == GrammarOp::kCharRngUpper))) {
        return error(ErrorCode::kInvalidArgument, "grammar: rule '" + name + "' has a class continuation without a class");
      }
    }
  }
  return Status::ok();
}

// Fixed point over "some alternative has every element satisfying pred": nullable (only nullable
// rule refs) or productive (terminals allowed, rule refs productive).
std::vector<bool> fixed_point(const Grammar& g, bool terminals_ok) {
  std::vector<bool> result(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (result[r]) continue;
      bool alt_ok = true;
      for (const GrammarElement& e : g.rules[r]) {
        if (is_end_of_sequence(e.op)) {
          if (alt_ok) {
            result[r] = true;
            changed = true;
            break;
          }
          alt_ok = true;
        } else if (e.op == GrammarOp::kRuleRef) {
          alt_ok = alt_ok && result[e.value];
        } else if (e.op != GrammarOp::kCharAlt && e.op != GrammarOp::kCharRngUpper) {
          alt_ok = alt_ok && terminals_ok;
        }
      }
    }
  }
  return result;
}

// Edges r -> s where s can be the first thing r expands to (only nullable items before it).
std::vector<std::vector<uint32_t>> leftmost_edges(const Grammar& g, const std::vector<bool>& nullable) {
  std::vector<std::vector<uint32_t>> edges(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r) {
    bool at_left = true;
    for (const GrammarElement& e : g.rules[r]) {
      if (is_end_of_sequence(e.op)) {
        at_left = true;
      } else if (e.op == GrammarOp::kRuleRef) {
        if (at_left) edges[r].push_back(e.value);
        at_left = at_left && nullable[e.value];
      } else {
        at_left = false;
      }
    }
  }
  return edges;
}

// Iterative DFS; returns the rule closing a cycle, or -1.
int64_t find_cycle(const std::vector<std::vector<uint32_t>>& edges) {
  std::vector<uint8_t> color(edges.size(), 0);  // 0 unvisited, 1 on the DFS path, 2 done
  std::vector<std::pair<uint32_t, size_t>> path;
  for (uint32_t start = 0; start < edges.size(); ++start) {
    if (color[start] != 0) continue;
    path.push_back({start, 0});
    color[start] = 1;
    while (!path.empty()) {
      auto& [node, next] = path.back();
      if (next == edges[node].size()) {
        color[node] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t to = edges[node][next++];
      if (color[to] == 1) return to;
      if (color[to] == 0) {
        color[to] = 1;
        path.push_back({to, 0});
      }
    }
  }
  return -1;
}

}  // namespace

Status check_grammar(const Grammar& g) {
  OX_TRY(check_structure(g));
  auto name = [&](size_t r) { return r < g.rule_names.size() ? g.rule_names[r] : std::to_string(r); };
  const std::vector<bool> nullable = fixed_point(g, /*terminals_ok=*/false);
  const int64_t cycle = find_cycle(leftmost_edges(g, nullable));
  if (cycle >= 0) {
    return error(ErrorCode::kInvalidArgument, "grammar: left recursion in rule '" + name(static_cast<size_t>(cycle)) +
                                                  "' (it can reach itself without consuming input)");
  }
  const std::vector<bool> productive = fixed_point(g, /*terminals_ok=*/true);
  if (!productive[g.root]) {
    return error(ErrorCode::kInvalidArgument,
                 "grammar: rule '" + name(g.root) + "' can never complete (every alternative recurses forever)");
  }
  return Status::ok();
}

}  // namespace ox
