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
// lower-case, keep the first code point of each NFD, split on whitespace/punctuation/CJK, then
// longest-match-first per word; a word with an unmatched rest becomes [UNK].
void wpm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>* out);

}  // namespace ox::tok
