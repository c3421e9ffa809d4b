// llama.cpp's greedy reference files (the zoo's format, ../shared/zoo/README.md; also
// tests/data/format_parity) and the check of a model against one: the prompt in one batch, then
// llama.cpp's 32 greedy tokens one at a time, each our greedy choice too (or a near-tie within the
// tolerance), and the top-5 logits of the first 4 positions within the tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/model/model.h"
#include "kernels/kernels.h"

namespace ox::test {

inline constexpr int kReferenceGenerated = 32;
inline constexpr int kReferenceTopPositions = 4;

// How one model did against its reference, for the pass tables the tests print.
struct ReferenceOutcome {
  bool ids_ok = false;
  int near_ties = 0;  // steps whose greedy id differs from llama.cpp's (a near-tie if within the tolerance)
  double max_tie_gap = 0;
  double max_diff = 0;
  double tolerance = 0;
};

struct Reference {
  std::vector<int32_t> prompt, gen;
  std::vector<std::vector<std::pair<int32_t, float>>> top5;  // [position][rank] = (id, logit)
};

inline std::vector<int32_t> parse_ids(const std::string& s) {
  std::istringstream in(s);
  std::vector<int32_t> out;
  int32_t id;
  while (in >> id) out.push_back(id);
  return out;
}

// "[id piece logit] [id piece logit] ...": a piece may hold spaces, brackets or even newlines, so
// an entry ends at the ']' followed by " [<digit>" or by nothing but whitespace.
inline std::vector<std::pair<int32_t, float>> parse_top(const std::string& s) {
  std::vector<std::pair<int32_t, float>> out;
  size_t i = s.find('[');
  while (i != std::string::npos) {
    size_t end = i;
    for (;;) {
      end = s.find(']', end + 1);
      if (end == std::string::npos) return out;
      const bool last = s.find_first_not_of(" \r\n", end + 1) == std::string::npos;
      const bool next = end + 3 < s.size() && s.compare(end + 1, 2, " [") == 0 && std::isdigit(s[end + 3]);
      if (last || next) break;
    }
    int32_t id = -1;
    std::from_chars(s.data() + i + 1, s.data() + end, id);
    const size_t space = s.rfind(' ', end);
    const float logit = std::strtof(s.substr(space + 1, end - space - 1).c_str(), nullptr);
    out.emplace_back(id, logit);
    i = s.find('[', end);
  }
  return out;
}

// The value after `flag` in a "synth:" line of a reference ("" if absent): the oxidize synth flags
// its model was made with.
inline std::string synth_flag(const std::string& line, const std::string& flag) {
  const size_t at = line.find(flag + " ");
  if (at == std::string::npos) return "";
  const size_t begin = at + flag.size() + 1;
  return line.substr(begin, line.find(' ', begin) - begin);
}

// The text after "\n<key>" up to the end of that line.
inline std::string field(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key);
  if (at == std::string::npos) return "";
  const size_t begin = at + 1 + key.size();
  return text.substr(begin, text.find('\n', begin) - begin);
}

// A reference file (empty fields where it could not be read: the checks then fail on sizes).
inline Reference read_reference_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reference ref;
  ref.prompt = parse_ids(field(text, "prompt_ids:"));
  ref.gen = parse_ids(field(text, "gen_ids:"));
  // "pos N top5 logits: ..." sections run to the next "\npos " or "\ngen_ids:" (pieces may be "\n").
  const size_t gen_at = text.find("\ngen_ids:");
  for (size_t at = text.find("\npos "); at != std::string::npos && at < gen_at;) {
    const size_t next = std::min(text.find("\npos ", at + 1), gen_at);
    const size_t body = text.find("logits:", at) + 7;
    ref.top5.push_back(parse_top(text.substr(body, next - body)));
    at = next == gen_at ? std::string::npos : next;
  }
  return ref;
}


// Feeds the reference prompt in one batch, then llama.cpp's 32 greedy tokens one at a time; checks
// that each is our greedy choice too, and the top-5 logits of the first 4 positions: the 5
// reference tokens within `tolerance` of llama.cpp's values, and no other token above the
// reference's 5th value + tolerance (ranks 2-5 may swap where llama.cpp's own values are closer
// than that; the zoo guarantees a top-1 gap >= 0.1 at those 4 positions only).
// `arch` names the model in failure messages. Returns what the pass tables print.
// n_generated / n_top_positions: how many of the reference's greedy ids and top-5 positions to
// check (the zoo's 32 and 4 by default; the reference must hold at least that many).
inline ReferenceOutcome check_against_reference(const Model& m, const Reference& ref,
                                                const kernels::KernelTable* table, Numerics numerics,
                                                double tolerance, const std::string& arch,
                                                int n_generated = kReferenceGenerated,
                                                int n_top_positions = kReferenceTopPositions) {
  ReferenceOutcome outcome;
  outcome.tolerance = tolerance;
  EXPECT_FALSE(ref.prompt.empty()) << arch;
  EXPECT_GE(ref.gen.size(), static_cast<size_t>(n_generated)) << arch;
  EXPECT_GE(ref.top5.size(), static_cast<size_t>(n_top_positions)) << arch;
  for (const auto& top : ref.top5) EXPECT_EQ(top.size(), 5u) << arch;
  if (ref.prompt.empty() || ref.gen.size() < static_cast<size_t>(n_generated) ||
      ref.top5.size() < static_cast<size_t>(n_top_positions)) {
    return outcome;
  }
  const Model* model = &m;
  const size_t n_vocab = static_cast<size_t>(model->hparams().n_vocab);

  ThreadPool pool(2);
  auto state = model->new_state(512, 64, table, &pool);
  EXPECT_TRUE(state.ok()) << state.status().message();
  if (!state.ok()) return outcome;
  state.value()->numerics = numerics;
  std::vector<float> logits(n_vocab);
  model->forward(*state.value(), ref.prompt, 0, false, logits.data());
  outcome.ids_ok = true;
  for (int step = 0; step < n_generated; ++step) {
    if (step < n_top_positions) {
      const auto& top = ref.top5[static_cast<size_t>(step)];
      std::vector<bool> in_top(n_vocab, false);
      for (const auto& [id, value] : top) {
        EXPECT_TRUE(id >= 0 && static_cast<size_t>(id) < n_vocab) << arch << " reference id " << id;
        if (id < 0 || static_cast<size_t>(id) >= n_vocab) return outcome;
        in_top[static_cast<size_t>(id)] = true;
        const double diff = std::fabs(static_cast<double>(logits[static_cast<size_t>(id)]) - value);
        outcome.max_diff = std::max(outcome.max_diff, diff);
        EXPECT_LE(diff, tolerance) << arch << " position " << step << " token " << id << ": got "
                                   << logits[static_cast<size_t>(id)] << ", llama.cpp " << value;
      }
      for (size_t v = 0; v < n_vocab; ++v) {
        EXPECT_TRUE(in_top[v] || logits[v] <= top[4].second + tolerance)
            << arch << " position " << step << ": token " << v << " (" << logits[v]
            << ") is above llama.cpp's top 5 (5th: " << top[4].second << ")";
      }
    }
    // Greedy choice; where it differs from llama.cpp's, the two must be a near-tie within the
    // tolerance (rounding noise decides those), and llama.cpp's token is fed on so that every
    // later position is still compared.
    const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const int32_t want = ref.gen[static_cast<size_t>(step)];
    if (best != want) {
      const double gap = static_cast<double>(logits[static_cast<size_t>(best)]) - logits[static_cast<size_t>(want)];
      EXPECT_LE(gap, tolerance) << arch << " step " << step << ": greedy " << best << ", llama.cpp " << want;
      outcome.ids_ok = outcome.ids_ok && gap <= tolerance;
      ++outcome.near_ties;
      outcome.max_tie_gap = std::max(outcome.max_tie_gap, gap);
    }
    const int64_t pos = static_cast<int64_t>(ref.prompt.size()) + step;
    model->forward(*state.value(), std::span<const int32_t>(&want, 1), pos, false, logits.data());
  }
  return outcome;
}

}  // namespace ox::test
