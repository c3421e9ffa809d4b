// Special-token split (see special_split.h). The order of work matters for overlapping texts
// ("<|a|>" inside "<|a|>b"): every token claims its occurrences before any shorter one looks.
#include "core/tokenizer/special_split.h"

#include <algorithm>

namespace ox::tok {

namespace {

// C-locale isspace, which is what llama.cpp's strip attributes test.
bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// True if [begin, end) overlaps one of the sorted, disjoint ranges.
bool overlaps(std::span<const TextRange> ranges, uint32_t begin, uint32_t end) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), begin,
                             [](uint32_t b, const TextRange& r) { return b < r.offset + r.length; });
  return it != ranges.end() && it->offset < end;
}

}  // namespace

SpecialSplitter::SpecialSplitter(const Vocab& vocab) : vocab_(vocab) {
  std::fill(std::begin(root_next_), std::end(root_next_), -1);
  nodes_.emplace_back();  // root
  end_node_.reserve(vocab.special_tokens.size());
  for (int32_t id : vocab.special_tokens) {
    const std::string_view t = vocab.text(id);
    int32_t node = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      const uint8_t b = static_cast<uint8_t>(t[k]);
      int32_t next = child(node, b);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        if (node == 0) {
          root_next_[b] = next;
        } else {
          auto& kids = nodes_[node].next;
          kids.insert(std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, int32_t{-1})),
                      std::make_pair(b, next));
        }
      }
      node = next;
    }
    nodes_[node].terminal = true;
    end_node_.push_back(node);
  }
}

int32_t SpecialSplitter::child(int32_t node, uint8_t b) const {
  if (node == 0) return root_next_[b];
  const auto& kids = nodes_[node].next;
  auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, int32_t{-1}));
  return (it != kids.end() && it->first == b) ? it->second : -1;
}

void SpecialSplitter::mark_present(std::string_view text, std::vector<uint8_t>* present) const {
  present->assign(nodes_.size(), 0);
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t node = root_next_[static_cast<uint8_t>(text[i])];
    for (size_t k = i + 1; node >= 0; ++k) {
      if (nodes_[node].terminal) (*present)[node] = 1;
      if (k >= text.size()) break;
      node = child(node, static_cast<uint8_t>(text[k]));
    }
  }
}

void SpecialSplitter::split(std::string_view text, bool parse_special, std::vector<Fragment>* out) const {
  split_impl(text, parse_special, {}, out);
}

void SpecialSplitter::split(std::string_view text, std::span<const TextRange> literal,
                            std::vector<Fragment>* out) const {
  split_impl(text, /*parse_special=*/true, literal, out);
}

void SpecialSplitter::split_impl(std::string_view text, bool parse_special, std::span<const TextRange> literal,
                                 std::vector<Fragment>* out) const {
  out->clear();
  if (text.empty()) return;
  out->push_back(Fragment{-1, 0, static_cast<uint32_t>(text.size())});
  if (vocab_.special_tokens.empty()) return;

  std::vector<uint8_t> present;
  mark_present(text, &present);
  std::vector<Fragment> next;
  for (size_t k = 0; k < vocab_.special_tokens.size(); ++k) {
    if (!present[end_node_[k]]) continue;
    const int32_t id = vocab_.special_tokens[k];
    const uint32_t attr = vocab_.attrs[id];
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const std::string_view tok = vocab_.text(id);
    const uint32_t tok_len = static_cast<uint32_t>(tok.size());
    const bool literal_applies = !literal.empty() && (attr & (kAttrControl | kAttrUnknown));

    next.clear();
    for (const Fragment& f : *out) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      uint32_t off = f.offset, len = f.length;
      uint32_t search = off;  // occurrences inside literal ranges are skipped, not split at
      while (len > 0) {
        const size_t m = text.substr(0, off + len).find(tok, search);
        if (m == std::string_view::npos) {
          next.push_back(Fragment{-1, off, len});
          break;
        }
        const uint32_t match = static_cast<uint32_t>(m);
        if (literal_applies && overlaps(literal, match, match + tok_len)) {
          search = match + 1;
          continue;
        }
        uint32_t left_len = match - off;
        if (attr & kAttrLstrip) {
          while (left_len > 0 && is_c_space(text[off + left_len - 1])) --left_len;
        }
        if (left_len > 0) next.push_back(Fragment{-1, off, left_len});
        next.push_back(Fragment{id, match, tok_len});
        uint32_t right_off = match + tok_len;
        uint32_t right_len = off + len - right_off;
        if (attr & kAttrRstrip) {
          while (right_len > 0 && is_c_space(text[right_off])) {
            ++right_off;
            --right_len;
          }
        }
        off = right_off;
        len = right_len;
        search = off;
      }
    }
    out->swap(next);
  }
}

}  // namespace ox::tok
