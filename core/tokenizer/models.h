// The per-family tokenizers, each turning one raw-text fragment into token ids (special tokens
// and BOS/EOS are handled around them in tokenizer.cpp). Internal to core/tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace ox::tok {

// SentencePiece BPE (llama.cpp "SPM"): starting from UTF-8 characters, repeatedly joins the
// adjacent pair whose concatenation is the highest-scoring token (leftmost on ties); pieces that
// are not tokens fall back to <0xXX> byte tokens. `text` is already space-escaped (U+2581).
void spm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>* out);

// Byte-pair encoding with ranked merges over the pieces of the family's pre-tokenizer.
// Byte-level vocabularies (GPT-2 alphabet) merge bytes; Gemma 4 merges raw UTF-8 characters and
// falls back to <0xXX> tokens.
class BpeTokenizer {
 public:
  explicit BpeTokenizer(const Vocab& vocab);
  void tokenize(std::string_view text, std::vector<int32_t>* out) const;

 private:
  struct Symbol {
    int32_t id;    // BPE symbol id (token, extra merge symbol, or -1)
    int32_t prev;
    int32_t next;
    uint32_t offset;  // bytes in the pre-tokenized text
    uint32_t length;  // 0 once merged into the left neighbour
  };
  struct Scratch;  // per-call buffers, reused across the words of one text
  void tokenize_word(std::string_view word, Scratch& scratch, std::vector<int32_t>* out) const;
  void emit_symbol(std::string_view bytes, int32_t id, std::vector<int32_t>* out) const;

  const Vocab& vocab_;
  bool byte_level_;
  int32_t byte_symbol_[256];     // byte-level: symbol id of each byte's alphabet character;
                                 // otherwise: symbol id of each ASCII byte (the common case)
  int32_t mark_symbol_ = -1;     // non-byte-level: symbol id of U+2581
  std::string byte_text_[256];   // byte-level: UTF-8 of each byte's alphabet character
};

// WordPiece as llama.cpp runs BERT vocabularies converted to GGUF (word starts carry U+2581):
// lower-case, keep the first code point of each NFD and drop combining marks (as the vocab's
// normaliser flags say), split on whitespace/punctuation/CJK, then
// longest-match-first per word; a word with an unmatched rest becomes [UNK].
void wpm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>* out);

// Byte trie over a fixed set of strings, laid out breadth-first with each node's children
// contiguous and sorted (12 bytes a node; a 250k-token vocabulary stays compact).
class ByteTrie {
 public:
  // Builds from (text, value) pairs; for a repeated text the largest value wins.
  void build(std::vector<std::pair<std::string_view, int32_t>> entries);
  int32_t child(int32_t node, uint8_t c) const;  // -1 if none; the root is node 0
  int32_t value(int32_t node) const { return nodes_[node].value; }  // -1 if no string ends here
  // How many leading bytes of s follow a path of the trie (ending at a string or not).
  size_t longest_path(std::string_view s) const;

 private:
  struct Node {
    uint32_t first_child = 0;
    uint32_t n_children : 24 = 0;
    uint32_t label : 8 = 0;
    int32_t value = -1;
  };
  std::vector<Node> nodes_{Node{}};
};

// Unigram (T5-style SentencePiece, llama.cpp "UGM"): charsmap normalisation, then the
// segmentation with the best total score; characters no token covers become [UNK] (runs merged).
class UgmTokenizer {
 public:
  explicit UgmTokenizer(const Vocab& vocab);
  void tokenize(std::string_view text, std::vector<int32_t>* out) const;

 private:
  struct Prefix {
    std::string_view text;  // what the next input bytes normalise to
    size_t consumed;        // how many input bytes that covers
  };
  Prefix normalize_prefix(std::string_view in, size_t off) const;
  void normalize(std::string_view in, std::string* out) const;

  const Vocab& vocab_;
  ByteTrie tokens_;        // normal, user-defined and unused tokens
  ByteTrie user_defined_;  // kept verbatim by the normaliser
  std::vector<uint32_t> xcda_;
  std::string_view replacements_;
  float unknown_score_ = 0.0f;
};

}  // namespace ox::tok
