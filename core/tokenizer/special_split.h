// Splits raw text around the texts of special tokens before the model tokenizer runs, as
// llama.cpp does: longest special texts first, each taking its leftmost non-overlapping
// occurrences in what is still raw text; LSTRIP/RSTRIP tokens swallow adjacent whitespace.
// Control and unknown tokens only count when parse_special is set; user-defined tokens always do.
// Literal ranges (chat message text inside a rendered template) are read as parse_special = false.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/vocab.h"

namespace ox::tok {

struct Fragment {
  int32_t token = -1;   // >= 0: a special token; -1: raw text. Either spans [offset, offset + length)
  uint32_t offset = 0;
  uint32_t length = 0;
};

class SpecialSplitter {
 public:
  explicit SpecialSplitter(const Vocab& vocab);
  void split(std::string_view text, bool parse_special, std::vector<Fragment>* out) const;
  // parse_special, except that a control or unknown token overlapping a `literal` range (sorted,
  // disjoint) stays text there.
  void split(std::string_view text, std::span<const TextRange> literal, std::vector<Fragment>* out) const;

 private:
  // Byte trie over the special texts, only used to learn which of them occur at all: the
  // llama.cpp-order split then runs just for those (most texts contain none).
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
    bool terminal = false;
  };
  int32_t child(int32_t node, uint8_t b) const;
  // present[node] = 1 for every terminal node whose text occurs in `text`.
  void mark_present(std::string_view text, std::vector<uint8_t>* present) const;
  void split_impl(std::string_view text, bool parse_special, std::span<const TextRange> literal,
                  std::vector<Fragment>* out) const;

  const Vocab& vocab_;
  std::vector<Node> nodes_;
  std::vector<int32_t> end_node_;  // per entry of vocab_.special_tokens: its terminal node
  int32_t root_next_[256];
};

}  // namespace ox::tok
