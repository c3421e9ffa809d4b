// Ranked-merge BPE over pre-tokenized pieces (see models.h). Symbols carry ids (tokens or extra
// merge symbols) so a merge is one hash lookup of the id pair; the heap pops the lowest rank,
// leftmost on ties, and skips pairs made stale by an earlier merge.
#include <algorithm>

#include "core/tokenizer/models.h"
#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace ox::tok {

namespace {

struct BpePair {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t merged;
  uint32_t size;  // bytes of left + right when queued
};

// std heap functions keep the greatest on top: the best pair (lowest rank, then leftmost) must
// compare greatest. A functor, not a function pointer, so the heap code inlines it.
struct Worse {
  bool operator()(const BpePair& a, const BpePair& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

struct BpeTokenizer::Scratch {
  std::vector<Symbol> sym;
  std::vector<BpePair> heap;
  std::string encoded;
};

BpeTokenizer::BpeTokenizer(const Vocab& vocab) : vocab_(vocab), byte_level_(vocab.pre != PreType::kGemma4) {
  for (uint32_t b = 0; b < 256; ++b) {
    byte_text_[b].clear();
    append_utf8(byte_text_[b], byte_to_gpt2_cp(static_cast<uint8_t>(b)));
    if (byte_level_) {
      byte_symbol_[b] = vocab.find_symbol(byte_text_[b]);
    } else {
      const char c = static_cast<char>(b);
      byte_symbol_[b] = b < 0x80 ? vocab.find_symbol(std::string_view(&c, 1)) : -1;
    }
  }
  mark_symbol_ = vocab.find_symbol("\xE2\x96\x81");
}

void BpeTokenizer::emit_symbol(std::string_view bytes, int32_t id, std::vector<int32_t>* out) const {
  if (id >= 0 && id < vocab_.n_vocab()) {
    out->push_back(id);
    return;
  }
  // Not a token (a vocabulary whose merges produce strings it lacks, or a character it lacks):
  // fall back per byte, to single-byte texts in the byte-level alphabet or to <0xXX> tokens.
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : bytes) {
    const uint8_t b = static_cast<uint8_t>(ch);
    if (byte_level_) {
      for (char enc : byte_text_[b]) {
        const int32_t t = vocab_.find(std::string_view(&enc, 1));
        if (t >= 0) out->push_back(t);
      }
    } else {
      const char buf[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
      const int32_t t = vocab_.find(std::string_view(buf, 6));
      if (t >= 0) out->push_back(t);
    }
  }
}

void BpeTokenizer::tokenize_word(std::string_view word, Scratch& scratch, std::vector<int32_t>* out) const {
  if (vocab_.ignore_merges && static_cast<int64_t>(word.size()) <= vocab_.max_token_len) {
    int32_t whole = -1;
    if (byte_level_) {
      std::string& encoded = scratch.encoded;
      encoded.clear();
      for (char ch : word) encoded += byte_text_[static_cast<uint8_t>(ch)];
      whole = vocab_.find(encoded);
    } else {
      whole = vocab_.find(word);
    }
    if (whole >= 0) {
      out->push_back(whole);
      return;
    }
  }

  std::vector<Symbol>& sym = scratch.sym;
  sym.clear();
  const uint32_t n = static_cast<uint32_t>(word.size());
  for (uint32_t off = 0; off < n;) {
    uint32_t len = 1;
    int32_t id;
    if (byte_level_) {
      id = byte_symbol_[static_cast<uint8_t>(word[off])];
    } else {
      const uint8_t lead = static_cast<uint8_t>(word[off]);
      len = std::min<uint32_t>(utf8_seq_len(lead), n - off);
      const std::string_view ch = word.substr(off, len);
      if (lead < 0x80) id = byte_symbol_[lead];
      else if (ch == "\xE2\x96\x81") id = mark_symbol_;
      else id = vocab_.find_symbol(ch);
    }
    const int32_t index = static_cast<int32_t>(sym.size());
    sym.push_back(Symbol{id, index - 1, off + len == n ? -1 : index + 1, off, len});
    off += len;
  }

  std::vector<BpePair>& heap = scratch.heap;
  heap.clear();
  const auto try_add = [&](int32_t left, int32_t right, bool keep_heap) {
    if (left < 0 || right < 0) return;
    int32_t rank, merged;
    if (!vocab_.merges.find(sym[left].id, sym[right].id, &rank, &merged)) return;
    heap.push_back(BpePair{rank, left, right, merged, sym[left].length + sym[right].length});
    if (keep_heap) std::push_heap(heap.begin(), heap.end(), Worse{});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) try_add(i - 1, i, false);
  std::make_heap(heap.begin(), heap.end(), Worse{});

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Worse{});
    const BpePair best = heap.back();
    heap.pop_back();
    Symbol& left = sym[best.left];
    Symbol& right = sym[best.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != best.size) continue;
    left.id = best.merged;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = best.left;
    try_add(left.prev, best.left, true);
    try_add(best.left, left.next, true);
  }

  for (int32_t i = 0; i != -1; i = sym[i].next) {
    emit_symbol(word.substr(sym[i].offset, sym[i].length), sym[i].id, out);
  }
}

void BpeTokenizer::tokenize(std::string_view text, std::vector<int32_t>* out) const {
  PreTokenized pieces;
  pre_tokenize(vocab_.pre, text, &pieces);
  Scratch scratch;
  uint32_t b = 0;
  for (uint32_t e : pieces.ends) {
    tokenize_word(std::string_view(pieces.text).substr(b, e - b), scratch, out);
    b = e;
  }
}

}  // namespace ox::tok
