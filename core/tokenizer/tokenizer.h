// Tokenizer: text <-> token ids for the vocabularies GGUF files carry (SentencePiece "llama",
// byte-level BPE "gpt2" with its family's pre-tokenizer, Gemma 4's SPM-style BPE, WordPiece "bert"),
// matching llama.cpp's tokenization id for id. Built once from a GgufFile; independent of it after.
// All methods are const and safe to call from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"

namespace ox::tok {

// A byte range [offset, offset + length) of a text.
struct TextRange {
  uint32_t offset = 0;
  uint32_t length = 0;
};

struct Fragment;

enum class TokenizerKind { kSentencePiece, kBpe, kWordPiece, kUnigram };

class Tokenizer {
 public:
  // Reads tokenizer.ggml.* metadata. Errors name the file and key (missing tokens, a model or
  // pre-tokenizer family we do not implement, arrays of the wrong type or length).
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::GgufFile& file);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // A bound on the bytes encode() works in per byte of text (SentencePiece: a 16-byte symbol and a
  // 16-byte queued pair per byte, pair heap regrowth; BPE: the pre-tokenizer's code points, classes
  // and chunk ends; every family: 4-byte ids, tripled while the vector regrows), checked against
  // memory_budget() before a large text is split, so a text too large for memory is kTooLarge.
  static constexpr uint64_t kEncodeBytesPerTextByte = 64;

  // add_special: add BOS/EOS (CLS/SEP for WordPiece) as the metadata or the family default says.
  // kTooLarge for a text whose tokenization would not fit in memory (kEncodeBytesPerTextByte).
  // parse_special: control-token texts in `text` ("<|im_start|>") become those tokens; user-defined
  // tokens are always recognised. Any bytes are accepted; invalid UTF-8 is tokenized the way
  // llama.cpp does (byte fallback for SentencePiece, U+FFFD for the code-point based families).
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_special, bool parse_special) const;
  // parse_special = true, except inside `literal` byte ranges (sorted, disjoint), where control-token
  // texts stay text: a rendered chat template whose message contents must not forge control tokens.
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_special,
                                      std::span<const TextRange> literal) const;
  // Byte ranges of `text` that encode(parse_special = true) reads as control or unknown tokens.
  std::vector<TextRange> control_token_ranges(std::string_view text) const;

  // Raw bytes of one token: byte tokens give their byte, SentencePiece U+2581 becomes ' ', GPT-2
  // alphabet characters become their bytes. Control/unknown tokens are empty unless render_special.
  // A piece may be part of a UTF-8 character; use StreamDecoder to print while generating.
  Result<std::string> token_to_piece(int32_t id, bool render_special) const;

  // Text of a token sequence as llama.cpp's detokenizer gives it: the pieces joined, the space
  // SentencePiece adds in front of the first word removed, and for families that ask for it the
  // clean-up of " ." " ," " 's" ... spaces.
  Result<std::string> decode(std::span<const int32_t> ids, bool render_special) const;

  TokenizerKind kind() const;
  int32_t n_vocab() const;
  int32_t bos_id() const;  // -1 if none
  int32_t eos_id() const;  // -1 if none
  int32_t eot_id() const;  // -1 if none
  int32_t unk_id() const;  // -1 if none
  int32_t sep_id() const;  // -1 if none
  int32_t pad_id() const;  // -1 if none
  bool add_bos() const;    // what encode(add_special = true) adds
  bool add_eos() const;
  // End of generation: EOS, EOT, <|im_end|>, <end_of_turn>, <|eot_id|>, <turn|> ... (llama.cpp's set).
  bool is_eog(int32_t id) const;
  bool is_control(int32_t id) const;  // control or unknown: rendered only on request
  // The vocabulary text of a token ("Ġthe", "▁the", "<0x0A>"); empty for an out-of-range id.
  std::string_view token_text(int32_t id) const;
  float token_score(int32_t id) const;
  // Token with exactly this vocabulary text, or -1.
  int32_t find_token(std::string_view text) const;
  std::string_view chat_template() const;  // tokenizer.chat_template or empty
  std::string_view model_name() const;     // tokenizer.ggml.model
  std::string_view pre_name() const;       // tokenizer.ggml.pre

 private:
  struct Impl;
  Result<std::vector<int32_t>> encode_fragments(std::string_view text, bool add_special,
                                                const std::vector<Fragment>& fragments) const;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ox::tok
