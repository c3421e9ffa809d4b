// WordPiece for BERT vocabularies in GGUF (see models.h). The converter stores word-initial pieces
// with a U+2581 prefix and continuation pieces bare, so a word is matched as "\u2581word".
#include <algorithm>

#include "core/tokenizer/models.h"
#include "core/tokenizer/unicode.h"

namespace ox::tok {

namespace {

// BERT's CJK ideograph blocks (its _is_chinese_char), including the extension range as the
// Hugging Face Rust tokenizer writes it (0x2B920, not 0x2B820).
bool is_chinese_char(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// llama.cpp's BERT pre-processing: split at whitespace; punctuation, ASCII symbols and CJK
// ideographs are words of their own; NUL, U+FFFD and control/format characters are dropped. With
// strip_accents each code point becomes its NFD head and combining marks (Mn, Mc, Me, so also
// Devanagari vowel signs and viramas) are dropped; with lowercase it is lower-cased.
std::vector<std::string> wpm_words(const Vocab& vocab, std::string_view text) {
  std::vector<uint32_t> cps;
  decode_utf8(text, cps);
  std::vector<std::string> words(1);
  for (uint32_t raw : cps) {
    const uint32_t cp = vocab.strip_accents ? nfd_first(raw) : raw;
    const uint16_t cls = cp_class(cp);
    if (cls & kCpWhitespace) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (cp == 0 || cp == kReplacementChar || (cls & kCpControl)) continue;
    if (vocab.strip_accents && (cls & kCpMark)) continue;
    std::string s;
    append_utf8(s, vocab.lowercase ? to_lower(cp) : cp);
    if ((cls & kCpPunctuation) || (cp < 0x7F && (cls & kCpSymbol)) || is_chinese_char(cp)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = std::move(s);
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wpm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>* out) {
  const std::string kPhantomSpace = "\xE2\x96\x81";
  for (const std::string& w : wpm_words(vocab, text)) {
    if (w.empty()) continue;
    const std::string word = kPhantomSpace + w;
    const std::string_view view(word);
    const uint32_t n = static_cast<uint32_t>(word.size());
    const size_t start = out->size();
    for (uint32_t i = 0; i < n; ++i) {
      bool matched = false;
      const uint32_t longest = std::min<uint32_t>(n, i + static_cast<uint32_t>(vocab.max_token_len) + 1);
      for (uint32_t j = longest; j > i; --j) {
        const int32_t id = vocab.find(view.substr(i, j - i));
        if (id >= 0) {
          out->push_back(id);
          matched = true;
          i = j - 1;
          break;
        }
      }
      if (!matched) {  // the rest of the word cannot be covered: the whole word becomes [UNK]
        out->resize(start);
        break;
      }
    }
    if (out->size() == start && vocab.unk >= 0) out->push_back(vocab.unk);
  }
}

}  // namespace ox::tok
