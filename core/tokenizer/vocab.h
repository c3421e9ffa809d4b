// Vocab: everything the tokenizers read from GGUF metadata (tokens, scores, token types, merges,
// special ids, flags), normalised the way llama.cpp's loader does it. Internal to core/tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"

namespace ox::tok {

enum class VocabType { kSpm, kBpe, kWpm, kUgm };

// Pre-tokenizer families (each is a fixed list of regexes, see pre_tokenizer.cpp).
enum class PreType {
  kNone,          // SPM / WPM / UGM: no regex split
  kDefault,       // gpt-neox and vocabs without a pre key
  kGpt2,          // gpt-2, mpt, olmo, jais, trillion ...
  kLlama3,        // llama-bpe, dbrx, smaug, chatglm-bpe
  kQwen2,         // qwen2, stablelm2, grok-2 ...: like llama3 with single digits
  kQwen35,        // qwen2 with combining marks kept in words
  kDeepseekLlm,
  kDeepseekCoder,
  kFalcon,
  kStarcoder,     // starcoder, refact, command-r, smollm, codeshell, exaone, minerva-7b
  kBloom,         // bloom, poro-chat, gpt3-finnish
  kViking,
  kGemma4,        // split on newline runs only; spaces escaped to U+2581
};

// Token attributes (bit values as llama.cpp's llama_token_attr).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,
  kAttrUserDefined = 1 << 4,
  kAttrByte = 1 << 5,
  kAttrNormalized = 1 << 6,
  kAttrLstrip = 1 << 7,
  kAttrRstrip = 1 << 8,
  kAttrSingleWord = 1 << 9,
};

// Open-addressing map (left symbol, right symbol) -> (merge rank, merged symbol). BPE looks up a
// pair for every adjacent symbol, so this is the hot table; 16 bytes a slot, no allocation per entry.
class MergeTable {
 public:
  void reserve(uint32_t n_entries);
  // Keeps the first rank given for a pair (GGUF merge lists may repeat a pair).
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged);
  bool find(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const;
  uint32_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t merged = 0;
  };
  static constexpr uint64_t kEmpty = ~0ull;
  static uint64_t hash(uint64_t key);
  std::vector<Slot> slots_;
  uint32_t size_ = 0;
};

// Open-addressing index text -> token id over the vocab's text arena. Every SentencePiece merge
// step and every BPE fallback looks a text up, so this replaces a node-based hash map.
class TextIndex {
 public:
  // texts(i) gives the text of id i; a repeated text maps to its last id.
  template <typename TextOf>
  void build(int32_t n, TextOf&& texts) {
    uint64_t cap = 16;
    while (cap < static_cast<uint64_t>(n) * 2) cap *= 2;
    slots_.assign(cap, Slot{});
    for (int32_t id = 0; id < n; ++id) insert(texts(id), id, texts);
  }
  template <typename TextOf>
  int32_t find(std::string_view s, TextOf&& texts) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const uint64_t mask = slots_.size() - 1;
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.id < 0) return -1;
      if (slot.tag == tag && texts(slot.id) == s) return slot.id;
    }
  }
  static uint64_t hash(std::string_view s);

 private:
  struct Slot {
    uint32_t tag = 0;  // high half of the hash, to skip most text comparisons
    int32_t id = -1;
  };
  template <typename TextOf>
  void insert(std::string_view s, int32_t id, TextOf&& texts) {
    const uint64_t h = hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const uint64_t mask = slots_.size() - 1;
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.id < 0 || (slot.tag == tag && texts(slot.id) == s)) {
        slot = Slot{tag, id};
        return;
      }
    }
  }
  std::vector<Slot> slots_;
};

struct Vocab {
  VocabType type = VocabType::kSpm;
  PreType pre = PreType::kNone;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre_name;    // tokenizer.ggml.pre

  // Token texts, back to back.
  std::string arena;
  std::vector<uint32_t> text_offsets;  // n_vocab + 1
  std::vector<float> scores;
  std::vector<uint32_t> attrs;
  TextIndex index;  // text -> id; a repeated text maps to its last id
  int32_t max_token_len = 0;

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  std::vector<int32_t> eog_ids;  // sorted

  bool add_space_prefix = false;
  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;
  bool ignore_merges = false;
  bool clean_spaces = false;
  bool remove_extra_whitespaces = false;
  bool escape_whitespaces = true;
  bool treat_whitespace_as_suffix = false;
  // WordPiece's BertNormalizer (tokenizer.ggml.normalizer.*; llama.cpp's defaults): lower-case, and
  // strip accents = take each code point's NFD head and drop combining marks (\p{M}).
  bool lowercase = true;
  bool strip_accents = true;
  // SentencePiece: no token has U+2581 after other text, so words can be merged separately.
  bool spm_word_split = false;

  // Control / user-defined / unknown tokens, longest text first: what the special-token split
  // looks for in raw text.
  std::vector<int32_t> special_tokens;

  // BPE symbols: ids below n_vocab are tokens; merge parts or results that are not tokens get
  // ids from n_vocab up, with their text in extra_symbols.
  MergeTable merges;
  std::unordered_map<std::string, int32_t> extra_symbol_ids;

  std::string chat_template;
  // Unigram: tokenizer.ggml.precompiled_charsmap (u32 array size, darts-clone array, replacements).
  std::vector<uint8_t> precompiled_charsmap;

  int32_t n_vocab() const { return static_cast<int32_t>(scores.size()); }
  std::string_view text(int32_t id) const {
    return std::string_view(arena.data() + text_offsets[id], text_offsets[id + 1] - text_offsets[id]);
  }
  // Token id of an exact text, or -1.
  int32_t find(std::string_view s) const {
    return index.find(s, [this](int32_t id) { return text(id); });
  }
  // BPE symbol id (token or extra merge symbol) of a text, or -1.
  int32_t find_symbol(std::string_view s) const;
  // Token for a raw byte in SPM-style vocabs (<0xXX>, else the byte as text, else unk).
  int32_t byte_token(uint8_t b) const;
  bool is_eog(int32_t id) const;
};

// Fills `vocab` from GGUF metadata.
Status load_vocab(const gguf::GgufFile& file, Vocab* vocab);

}  // namespace ox::tok
