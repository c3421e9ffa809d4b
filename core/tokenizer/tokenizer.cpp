// Tokenizer: loading, encode (special-token split, then the family's tokenizer per fragment, with
// BOS/EOS around), token pieces and llama.cpp-style detokenization.
#include "core/tokenizer/tokenizer.h"

#include <limits>

#include "core/base/memory.h"
#include "core/tokenizer/models.h"
#include "core/tokenizer/special_split.h"
#include "core/tokenizer/unicode.h"
#include "core/tokenizer/vocab.h"

namespace ox::tok {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

std::string escape_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char c : s) {
    if (c == ' ') out.append(kSpaceMark); else out.push_back(c);
  }
  return out;
}

std::string unescape_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
      out.push_back(' ');
      i += kSpaceMark.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// GPT-2 alphabet text back to bytes; characters outside the alphabet are kept visible the way
// llama.cpp reports them.
std::string decode_byte_level(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const uint32_t cp = decode_utf8_at(text, pos);
    const int32_t b = gpt2_cp_to_byte(cp);
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
      continue;
    }
    std::string utf8;
    append_utf8(utf8, cp);
    out += "[UNK_BYTE_0x";
    for (char c : utf8) out += strfmt("%02x", static_cast<unsigned>(static_cast<uint8_t>(c)));
    out.append(text);
    out += "]";
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Byte of a "<0xHH>" token; -1 if the text is not of that form.
int byte_of_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  const int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
  return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

// llama.cpp's clean_up_tokenization_spaces, three in-place passes: " ?" " !" " ." " ," lose the
// space; " ' " becomes "'"; " 's" " 'm" " 're" " 've" lose the space. In place matters: the second
// pass blanks the space after an apostrophe, which the next character then sees.
void clean_spaces(std::string& t) {
  size_t total = t.size();
  const auto pass = [&](auto&& step) {
    const size_t n = total;
    total = n ? 1 : 0;
    for (size_t i = 1; i < n; ++i) step(i, n);
    t.resize(total);
  };
  pass([&](size_t& i, size_t) {
    const char x = t[i];
    if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    t[total++] = x;
  });
  pass([&](size_t& i, size_t n) {
    const char x = t[i];
    if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
      --total;
      t[++i] = '\0';
    }
    t[total++] = x;
  });
  pass([&](size_t& i, size_t n) {
    const char x = t[i];
    if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = t[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (x1 != 't' && x1 != 'd' && i + 2 < n) {
        const char x2 = t[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
      }
    }
    t[total++] = x;
  });
}

}  // namespace

struct Tokenizer::Impl {
  Vocab vocab;
  std::unique_ptr<SpecialSplitter> splitter;
  std::unique_ptr<BpeTokenizer> bpe;
  std::unique_ptr<UgmTokenizer> ugm;

  void encode_fragment(std::string_view raw, bool space_prefix, std::vector<int32_t>* out) const;
  std::string piece(int32_t id, bool render_special) const;
};

void Tokenizer::Impl::encode_fragment(std::string_view raw, bool space_prefix, std::vector<int32_t>* out) const {
  switch (vocab.type) {
    case VocabType::kSpm: {
      std::string s;
      if (space_prefix) s.push_back(' ');
      s.append(raw);
      spm_tokenize(vocab, escape_spaces(s), out);
      break;
    }
    case VocabType::kBpe:
      if (vocab.escape_whitespaces) bpe->tokenize(escape_spaces(raw), out); else bpe->tokenize(raw, out);
      break;
    case VocabType::kWpm:
      wpm_tokenize(vocab, raw, out);
      break;
    case VocabType::kUgm:
      ugm->tokenize(raw, out);
      break;
  }
}

std::string Tokenizer::Impl::piece(int32_t id, bool render_special) const {
  const uint32_t attr = vocab.attrs[id];
  if (!render_special && (attr & (kAttrUnknown | kAttrControl))) return std::string();
  const std::string_view text = vocab.text(id);
  if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return std::string(text);
  if (attr & kAttrNormal) {
    if (vocab.type == VocabType::kBpe && !vocab.escape_whitespaces) return decode_byte_level(text);
    return unescape_spaces(text);
  }
  if (attr & kAttrByte) {
    const int b = byte_of_token(text);
    return b < 0 ? std::string(text) : std::string(1, static_cast<char>(b));
  }
  return std::string();  // unused / undefined tokens render as nothing
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  auto impl = std::make_unique<Impl>();
  OX_TRY(load_vocab(file, &impl->vocab).with_context("loading tokenizer"));
  impl->splitter = std::make_unique<SpecialSplitter>(impl->vocab);
  if (impl->vocab.type == VocabType::kBpe) impl->bpe = std::make_unique<BpeTokenizer>(impl->vocab);
  if (impl->vocab.type == VocabType::kUgm) impl->ugm = std::make_unique<UgmTokenizer>(impl->vocab);
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

namespace {

// Texts below this skip the check: reading /proc/meminfo costs more than tokenizing them.
constexpr uint64_t kEncodeCheckFrom = uint64_t{1} << 20;

Status check_encode_memory(size_t text_bytes) {
  if (text_bytes < kEncodeCheckFrom) return Status::ok();
  return check_memory(static_cast<uint64_t>(text_bytes) * Tokenizer::kEncodeBytesPerTextByte,
                      strfmt("tokenizing %llu bytes of text", static_cast<unsigned long long>(text_bytes)),
                      "send a shorter text");
}

}  // namespace

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  OX_TRY(check_encode_memory(text.size()));
  std::vector<Fragment> fragments;
  if (text.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    impl_->splitter->split(text, parse_special, &fragments);
  }
  return encode_fragments(text, add_special, fragments);
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special,
                                               std::span<const TextRange> literal) const {
  OX_TRY(check_encode_memory(text.size()));
  std::vector<Fragment> fragments;
  if (text.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    impl_->splitter->split(text, literal, &fragments);
  }
  return encode_fragments(text, add_special, fragments);
}

std::vector<TextRange> Tokenizer::control_token_ranges(std::string_view text) const {
  std::vector<TextRange> out;
  if (text.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return out;
  std::vector<Fragment> fragments;
  impl_->splitter->split(text, /*parse_special=*/true, &fragments);
  for (const Fragment& f : fragments) {
    if (f.token >= 0 && is_control(f.token)) out.push_back(TextRange{f.offset, f.length});
  }
  return out;
}

Result<std::vector<int32_t>> Tokenizer::encode_fragments(std::string_view text, bool add_special,
                                                         const std::vector<Fragment>& fragments) const {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return error(ErrorCode::kTooLarge, strfmt("text of %llu bytes is too long to tokenize",
                                              static_cast<unsigned long long>(text.size())));
  }
  const Vocab& v = impl_->vocab;

  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  // WordPiece wraps the text in [CLS] ... [SEP] whatever add_bos/add_sep say (llama.cpp does).
  const bool wpm = v.type == VocabType::kWpm;
  const bool bos = add_special && (v.add_bos || wpm) && v.bos >= 0;
  if (bos) out.push_back(v.bos);
  // SentencePiece prefixes a space to the first text and to text right after a special token.
  bool after_special = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    impl_->encode_fragment(text.substr(f.offset, f.length), v.add_space_prefix && after_special, &out);
    after_special = false;
  }
  if (add_special) {
    if (wpm) {
      if (v.sep >= 0) out.push_back(v.sep);
    } else if (v.add_eos && v.eos >= 0) {
      out.push_back(v.eos);
    }
  }
  return out;
}

Result<std::string> Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) {
    return error(ErrorCode::kOutOfRange, strfmt("token id %d is outside the vocabulary (%d tokens)", id, n_vocab()));
  }
  return impl_->piece(id, render_special);
}

Result<std::string> Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  const Vocab& v = impl_->vocab;
  std::string text;
  bool strip_space = v.add_space_prefix;  // undo the space SentencePiece put before the first word
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) {
      return error(ErrorCode::kOutOfRange, strfmt("token id %d is outside the vocabulary (%d tokens)", id, n_vocab()));
    }
    const std::string p = impl_->piece(id, render_special);
    text.append(strip_space && !p.empty() && p[0] == ' ' ? std::string_view(p).substr(1) : std::string_view(p));
    strip_space = false;
  }
  if (v.clean_spaces) clean_spaces(text);
  return text;
}

TokenizerKind Tokenizer::kind() const {
  switch (impl_->vocab.type) {
    case VocabType::kSpm: return TokenizerKind::kSentencePiece;
    case VocabType::kBpe: return TokenizerKind::kBpe;
    case VocabType::kWpm: return TokenizerKind::kWordPiece;
    case VocabType::kUgm: return TokenizerKind::kUnigram;
  }
  return TokenizerKind::kBpe;
}

int32_t Tokenizer::n_vocab() const { return impl_->vocab.n_vocab(); }
int32_t Tokenizer::bos_id() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos_id() const { return impl_->vocab.eos; }
int32_t Tokenizer::eot_id() const { return impl_->vocab.eot; }
int32_t Tokenizer::unk_id() const { return impl_->vocab.unk; }
int32_t Tokenizer::sep_id() const { return impl_->vocab.sep; }
int32_t Tokenizer::pad_id() const { return impl_->vocab.pad; }
bool Tokenizer::add_bos() const {
  const Vocab& v = impl_->vocab;
  return (v.add_bos || v.type == VocabType::kWpm) && v.bos >= 0;
}
bool Tokenizer::add_eos() const {
  const Vocab& v = impl_->vocab;
  return v.type == VocabType::kWpm ? v.sep >= 0 : (v.add_eos && v.eos >= 0);
}
bool Tokenizer::is_eog(int32_t id) const { return id >= 0 && impl_->vocab.is_eog(id); }
bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && id < n_vocab() && (impl_->vocab.attrs[id] & (kAttrControl | kAttrUnknown)) != 0;
}
std::string_view Tokenizer::token_text(int32_t id) const {
  return (id >= 0 && id < n_vocab()) ? impl_->vocab.text(id) : std::string_view();
}
float Tokenizer::token_score(int32_t id) const {
  return (id >= 0 && id < n_vocab()) ? impl_->vocab.scores[id] : 0.0f;
}
int32_t Tokenizer::find_token(std::string_view text) const { return impl_->vocab.find(text); }
std::string_view Tokenizer::chat_template() const { return impl_->vocab.chat_template; }
std::string_view Tokenizer::model_name() const { return impl_->vocab.model_name; }
std::string_view Tokenizer::pre_name() const { return impl_->vocab.pre_name; }

}  // namespace ox::tok
