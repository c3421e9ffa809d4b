// SentencePiece-style score merging (see models.h). A heap of candidate pairs, highest token score
// first and leftmost on ties; entries made stale by an earlier merge are recognised by their size.
#include <algorithm>

#include "core/tokenizer/models.h"
#include "core/tokenizer/unicode.h"

namespace ox::tok {

namespace {

struct SpmSymbol {
  int32_t prev;
  int32_t next;
  uint32_t offset;
  uint32_t length;  // 0 once merged into the left neighbour
};

struct SpmPair {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;  // bytes of left + right when queued
};

// std heap functions keep the greatest on top: the best pair (highest score, then leftmost) must
// compare greatest. A functor, not a function pointer, so the heap code inlines it.
struct Worse {
  bool operator()(const SpmPair& a, const SpmPair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

// The score-merge over one segment of symbols [first, last) of `text`.
void merge_segment(const Vocab& vocab, std::string_view text, std::vector<SpmSymbol>& sym, std::vector<SpmPair>& heap,
                   int32_t first, int32_t last, std::vector<int32_t>* out) {
  for (int32_t i = first; i < last; ++i) {
    sym[i].prev = i == first ? -1 : i - 1;
    sym[i].next = i + 1 == last ? -1 : i + 1;
  }
  heap.clear();
  const auto try_add = [&](int32_t left, int32_t right, bool keep_heap) {
    if (left < 0 || right < 0) return;
    const uint32_t size = sym[left].length + sym[right].length;
    const int32_t id = vocab.find(text.substr(sym[left].offset, size));
    if (id < 0) return;
    heap.push_back(SpmPair{vocab.scores[id], left, right, size});
    if (keep_heap) std::push_heap(heap.begin(), heap.end(), Worse{});
  };
  for (int32_t i = first + 1; i < last; ++i) try_add(i - 1, i, false);
  std::make_heap(heap.begin(), heap.end(), Worse{});

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Worse{});
    const SpmPair best = heap.back();
    heap.pop_back();
    SpmSymbol& left = sym[best.left];
    SpmSymbol& right = sym[best.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != best.size) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = best.left;
    try_add(left.prev, best.left, true);
    try_add(best.left, left.next, true);
  }

  for (int32_t i = first; i != -1; i = sym[i].next) {
    const std::string_view piece = text.substr(sym[i].offset, sym[i].length);
    const int32_t id = vocab.find(piece);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    // Merged symbols are always tokens, so this is a single character missing from the vocab.
    for (char ch : piece) {
      const int32_t b = vocab.byte_token(static_cast<uint8_t>(ch));
      if (b >= 0) out->push_back(b);
    }
  }
}

}  // namespace

void spm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>* out) {
  if (text.empty()) return;
  std::vector<SpmSymbol> sym;
  sym.reserve(text.size());
  for (uint32_t off = 0; off < text.size();) {
    const uint32_t len = std::min<uint32_t>(utf8_seq_len(static_cast<uint8_t>(text[off])),
                                            static_cast<uint32_t>(text.size()) - off);
    sym.push_back(SpmSymbol{-1, -1, off, len});
    off += len;
  }
  // Merging is independent on either side of a point no token can span (vocab.spm_word_split:
  // no token has U+2581 after other text), so each word is merged on its own: same result, but
  // the heap and the lookups stay small and cache-resident.
  std::vector<SpmPair> heap;
  const auto is_mark = [&](int32_t i) { return text.substr(sym[i].offset, sym[i].length) == kSpaceMark; };
  const int32_t n = static_cast<int32_t>(sym.size());
  int32_t first = 0;
  for (int32_t i = 1; i < n; ++i) {
    if (vocab.spm_word_split && is_mark(i) && !is_mark(i - 1)) {
      merge_segment(vocab, text, sym, heap, first, i, out);
      first = i;
    }
  }
  merge_segment(vocab, text, sym, heap, first, n, out);
}

}  // namespace ox::tok
