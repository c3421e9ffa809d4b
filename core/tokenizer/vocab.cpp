// Loads a Vocab from GGUF metadata: token list, scores, types, merges, special ids and the
// per-family flags (which pre-tokenizer, add BOS/EOS, space prefix ...), as llama.cpp decides them.
#include "core/tokenizer/vocab.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <limits>

#include "core/tokenizer/vocab_rules.h"

namespace ox::tok {

namespace {

// GGUF token_type values (gguf-py TokenType).
enum GgufTokenType : int64_t {
  kTypeUndefined = 0, kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3,
  kTypeUserDefined = 4, kTypeUnused = 5, kTypeByte = 6,
};

uint32_t attr_of_type(int64_t type) {
  switch (type) {
    case kTypeUnknown: return kAttrUnknown;
    case kTypeUnused: return kAttrUnused;
    case kTypeNormal: return kAttrNormal;
    case kTypeControl: return kAttrControl;
    case kTypeUserDefined: return kAttrUserDefined;
    case kTypeByte: return kAttrByte;
    default: return kAttrUndefined;
  }
}

// Any integer GGUF value as int64 (values past INT64_MAX come out negative: rejected as ids).
int64_t integer_value(const gguf::Value& val) {
  switch (val.type) {
    case gguf::ValueType::INT8: case gguf::ValueType::INT16:
    case gguf::ValueType::INT32: case gguf::ValueType::INT64: return val.i;
    default: return static_cast<int64_t>(val.u);
  }
}

Status bad(const gguf::GgufFile& file, const char* key, const std::string& what) {
  return error(ErrorCode::kInvalidFile, strfmt("%s: %s: %s", file.name().c_str(), key, what.c_str()));
}

// Chooses the tokenizer family and its defaults from tokenizer.ggml.model.
Status set_model_defaults(const gguf::GgufFile& file, Vocab* v) {
  const std::string& m = v->model_name;
  if (m == "llama") {
    v->type = VocabType::kSpm;
    v->bos = 1; v->eos = 2; v->unk = 0;
  } else if (m == "gpt2" || m == "gemma4") {
    v->type = VocabType::kBpe;
    v->bos = 11; v->eos = 11;  // llama.cpp's historical BPE defaults, used when the keys are absent
  } else if (m == "bert") {
    v->type = VocabType::kWpm;
    v->bos = 101; v->unk = 100; v->sep = 102; v->pad = 0; v->mask = 103;
  } else if (m == "t5") {
    v->type = VocabType::kUgm;
    v->eos = 1; v->unk = 2; v->pad = 0;
  } else {
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: tokenizer.ggml.model '%s' is not supported", file.name().c_str(), m.c_str()));
  }
  return Status::ok();
}

Status set_family_flags(const gguf::GgufFile& file, Vocab* v) {
  switch (v->type) {
    case VocabType::kSpm:
      v->pre = PreType::kNone;
      v->add_space_prefix = true; v->clean_spaces = false; v->add_bos = true; v->add_eos = false;
      break;
    case VocabType::kWpm:
      v->pre = PreType::kNone;
      v->add_space_prefix = false; v->clean_spaces = true;
      v->add_bos = true; v->add_eos = false; v->add_sep = true;
      break;
    case VocabType::kUgm:
      v->pre = PreType::kNone;
      v->add_bos = false; v->add_eos = true;
      break;
    case VocabType::kBpe: {
      v->add_space_prefix = false; v->escape_whitespaces = false; v->clean_spaces = true;
      // Gemma 4's converter writes no pre key: the model name implies it.
      const std::string pre = v->model_name == "gemma4" ? std::string("gemma4") : v->pre_name;
      const PreTypeRule* rule = find_pre_type_rule(pre);
      if (rule == nullptr) {
        return error(ErrorCode::kUnsupported, strfmt("%s: tokenizer.ggml.pre '%s' is not supported",
                                                     file.name().c_str(), pre.c_str()));
      }
      v->pre = rule->pre;
      if (!rule->clean_spaces) v->clean_spaces = false;
      if (rule->ignore_merges) v->ignore_merges = true;
      if (rule->add_bos) v->add_bos = true;
      if (rule->escape_whitespaces) v->escape_whitespaces = true;
      if (rule->no_bos) v->bos = -1;
      break;
    }
  }
  OX_ASSIGN_OR_RETURN(v->add_space_prefix, file.get_bool_or("tokenizer.ggml.add_space_prefix", v->add_space_prefix));
  OX_ASSIGN_OR_RETURN(v->remove_extra_whitespaces,
                      file.get_bool_or("tokenizer.ggml.remove_extra_whitespaces", v->remove_extra_whitespaces));
  // As llama.cpp: strip_accents follows lowercase unless it is given itself.
  OX_ASSIGN_OR_RETURN(v->lowercase, file.get_bool_or("tokenizer.ggml.normalizer.lowercase", v->lowercase));
  v->strip_accents = v->lowercase;
  OX_ASSIGN_OR_RETURN(v->strip_accents, file.get_bool_or("tokenizer.ggml.normalizer.strip_accents", v->strip_accents));
  return Status::ok();
}

Status load_tokens(const gguf::GgufFile& file, Vocab* v) {
  OX_ASSIGN_OR_RETURN(const std::vector<std::string_view>* tokens, file.get_string_array("tokenizer.ggml.tokens"));
  const uint64_t n = tokens->size();
  if (n == 0 || n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max() / 2)) {
    return bad(file, "tokenizer.ggml.tokens", strfmt("bad token count %" PRIu64, n));
  }
  const gguf::Value* scores = file.find("tokenizer.ggml.scores");
  if (scores != nullptr && (scores->type != gguf::ValueType::ARRAY || scores->count < n ||
                            scores->elem_type != gguf::ValueType::FLOAT32)) {
    return bad(file, "tokenizer.ggml.scores", "expected a FLOAT32 array with one score per token");
  }
  const gguf::Value* types = file.find("tokenizer.ggml.token_type");
  if (types != nullptr) {
    const gguf::ValueType e = types->elem_type;
    const bool integer = e != gguf::ValueType::FLOAT32 && e != gguf::ValueType::FLOAT64 && e != gguf::ValueType::BOOL &&
                         e != gguf::ValueType::STRING && e != gguf::ValueType::ARRAY;
    if (types->type != gguf::ValueType::ARRAY || types->count < n || !integer) {
      return bad(file, "tokenizer.ggml.token_type", "expected an integer array with one type per token");
    }
  }

  uint64_t total = 0;
  for (std::string_view t : *tokens) total += t.empty() ? 24 : t.size();
  if (total > std::numeric_limits<uint32_t>::max()) {
    return bad(file, "tokenizer.ggml.tokens", strfmt("%" PRIu64 " bytes of token text is too much", total));
  }
  v->arena.reserve(total);
  v->text_offsets.resize(n + 1);
  v->scores.resize(n);
  v->attrs.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    v->text_offsets[i] = static_cast<uint32_t>(v->arena.size());
    std::string_view t = (*tokens)[i];
    // llama.cpp renames empty tokens so every token has a findable, distinct text.
    if (t.empty()) v->arena += strfmt("[EMPTY_%" PRIu64 "]", i); else v->arena.append(t);
    v->scores[i] = scores ? scores->f32_at(i) : 0.0f;
    v->attrs[i] = types ? attr_of_type(types->integer_at(i)) : kAttrNormal;
  }
  v->text_offsets[n] = static_cast<uint32_t>(v->arena.size());
  v->index.build(static_cast<int32_t>(n), [v](int32_t id) { return v->text(id); });
  for (uint64_t i = 0; i < n; ++i) {
    v->max_token_len = std::max<int32_t>(v->max_token_len, static_cast<int32_t>(v->text(static_cast<int32_t>(i)).size()));
  }
  return Status::ok();
}

// True if no token has U+2581 anywhere but in a leading run of them ("▁▁the" yes, "a▁b" no).
bool marks_only_lead(const Vocab& v) {
  constexpr std::string_view kMark = "\xE2\x96\x81";
  for (int32_t id = 0; id < v.n_vocab(); ++id) {
    const std::string_view t = v.text(id);
    size_t k = 0;
    while (t.substr(k, kMark.size()) == kMark) k += kMark.size();
    if (t.find(kMark, k) != std::string_view::npos) return false;
  }
  return true;
}

int32_t intern_symbol(Vocab* v, std::string_view s) {
  const int32_t id = v->find(s);
  if (id >= 0) return id;
  auto [it, inserted] = v->extra_symbol_ids.try_emplace(std::string(s), 0);
  if (inserted) it->second = v->n_vocab() + static_cast<int32_t>(v->extra_symbol_ids.size()) - 1;
  return it->second;
}

Status load_merges(const gguf::GgufFile& file, Vocab* v) {
  OX_ASSIGN_OR_RETURN(const std::vector<std::string_view>* merges, file.get_string_array("tokenizer.ggml.merges"));
  if (merges->size() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max() / 4)) {
    return bad(file, "tokenizer.ggml.merges", "too many merges");
  }
  v->merges.reserve(static_cast<uint32_t>(merges->size()));
  std::string joined;
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string_view m = (*merges)[i];
    // The separator is the first space after the first byte, so a left part may itself be " ".
    const size_t pos = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (pos == std::string_view::npos) continue;
    const std::string_view first = m.substr(0, pos), second = m.substr(pos + 1);
    if (second.empty()) continue;
    joined.assign(first);
    joined.append(second);
    const int32_t left = intern_symbol(v, first);
    const int32_t right = intern_symbol(v, second);
    const int32_t merged = intern_symbol(v, joined);
    v->merges.insert(left, right, static_cast<int32_t>(i), merged);
  }
  return Status::ok();
}

Status load_charsmap(const gguf::GgufFile& file, Vocab* v) {
  const char* key = "tokenizer.ggml.precompiled_charsmap";
  const gguf::Value* map = file.find(key);
  if (map == nullptr) return Status::ok();
  if (map->type != gguf::ValueType::ARRAY ||
      (map->elem_type != gguf::ValueType::UINT8 && map->elem_type != gguf::ValueType::INT8) || map->raw == nullptr) {
    return bad(file, key, "expected a byte array");
  }
  v->precompiled_charsmap.assign(map->raw, map->raw + map->count);
  if (map->count == 0) return Status::ok();
  uint32_t blob = 0;
  if (map->count >= 4) std::memcpy(&blob, map->raw, 4);
  if (map->count < 4 || static_cast<uint64_t>(blob) + 4 >= map->count) {
    return bad(file, key, strfmt("double array of %u bytes does not fit in %llu bytes", blob,
                                 static_cast<unsigned long long>(map->count)));
  }
  return Status::ok();
}

// Special ids from metadata; an id past the vocabulary keeps the family default (llama.cpp warns).
Status load_special_ids(const gguf::GgufFile& file, Vocab* v) {
  const struct { const char* key; int32_t* id; } keys[] = {
      {"tokenizer.ggml.bos_token_id", &v->bos}, {"tokenizer.ggml.eos_token_id", &v->eos},
      {"tokenizer.ggml.eot_token_id", &v->eot}, {"tokenizer.ggml.eom_token_id", &v->eom},
      {"tokenizer.ggml.unknown_token_id", &v->unk}, {"tokenizer.ggml.seperator_token_id", &v->sep},
      {"tokenizer.ggml.padding_token_id", &v->pad}, {"tokenizer.ggml.mask_token_id", &v->mask},
      {"tokenizer.ggml.fim_pre_token_id", &v->fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &v->fim_suf},
      {"tokenizer.ggml.fim_mid_token_id", &v->fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &v->fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &v->fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &v->fim_sep},
      {"tokenizer.ggml.prefix_token_id", &v->fim_pre}, {"tokenizer.ggml.suffix_token_id", &v->fim_suf},
      {"tokenizer.ggml.middle_token_id", &v->fim_mid},
  };
  for (const auto& k : keys) {
    const gguf::Value* val = file.find(k.key);
    if (val == nullptr) continue;
    if (!val->is_integer()) return bad(file, k.key, "expected an integer token id");
    const int64_t id = integer_value(*val);
    if (id >= 0 && id < v->n_vocab()) *k.id = static_cast<int32_t>(id);
  }
  // BERT converters write the [CLS] id, which is what WordPiece prepends as "BOS".
  if (v->type == VocabType::kWpm && file.find("tokenizer.ggml.bos_token_id") == nullptr) {
    const gguf::Value* cls = file.find("tokenizer.ggml.cls_token_id");
    if (cls != nullptr && cls->is_integer() && integer_value(*cls) >= 0 && integer_value(*cls) < v->n_vocab()) {
      v->bos = static_cast<int32_t>(integer_value(*cls));
    }
  }
  OX_ASSIGN_OR_RETURN(v->add_bos, file.get_bool_or("tokenizer.ggml.add_bos_token", v->add_bos));
  OX_ASSIGN_OR_RETURN(v->add_eos, file.get_bool_or("tokenizer.ggml.add_eos_token", v->add_eos));
  OX_ASSIGN_OR_RETURN(v->add_sep, file.get_bool_or("tokenizer.ggml.add_sep_token", v->add_sep));
  // Family defaults may point past a small vocabulary.
  for (int32_t* id : {&v->bos, &v->eos, &v->eot, &v->eom, &v->unk, &v->sep, &v->pad, &v->mask}) {
    if (*id >= v->n_vocab()) *id = -1;
  }
  return Status::ok();
}

}  // namespace

uint64_t TextIndex::hash(std::string_view s) {
  // 8 bytes at a time, multiply-xorshift mixing (wyhash-style constants); short texts dominate.
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0xA0761D6478BD642Full ^ (s.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0xE7037ED1A0B428DBull;
  h ^= h >> 32;
  h *= kMul;
  return h ^ (h >> 29);
}

void MergeTable::reserve(uint32_t n_entries) {
  uint64_t cap = 16;
  while (cap < static_cast<uint64_t>(n_entries) * 2) cap *= 2;  // load factor <= 0.5
  slots_.assign(cap, Slot{});
  size_ = 0;
}

uint64_t MergeTable::hash(uint64_t key) {
  // splitmix64 finaliser: token ids are small and dense, their bits need spreading.
  key ^= key >> 30; key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27; key *= 0x94d049bb133111ebull;
  return key ^ (key >> 31);
}

void MergeTable::insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if (slots_.empty() || (size_ + 1) * 2 > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != kEmpty) insert(static_cast<int32_t>(s.key >> 32), static_cast<int32_t>(s.key), s.rank, s.merged);
    }
  }
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i].key == key) return;  // first rank wins
    if (slots_[i].key == kEmpty) {
      slots_[i] = Slot{key, rank, merged};
      ++size_;
      return;
    }
  }
}

bool MergeTable::find(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const {
  if (slots_.empty() || left < 0 || right < 0) return false;
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i].key == key) {
      *rank = slots_[i].rank;
      *merged = slots_[i].merged;
      return true;
    }
    if (slots_[i].key == kEmpty) return false;
  }
}

int32_t Vocab::find_symbol(std::string_view s) const {
  const int32_t id = find(s);
  if (id >= 0 || extra_symbol_ids.empty()) return id;
  auto it = extra_symbol_ids.find(std::string(s));
  return it == extra_symbol_ids.end() ? -1 : it->second;
}

int32_t Vocab::byte_token(uint8_t b) const {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const char buf[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
  int32_t id = find(std::string_view(buf, 6));
  if (id < 0) id = find(std::string_view(reinterpret_cast<const char*>(&b), 1));
  return id >= 0 ? id : unk;
}

bool Vocab::is_eog(int32_t id) const { return std::binary_search(eog_ids.begin(), eog_ids.end(), id); }

Status load_vocab(const gguf::GgufFile& file, Vocab* v) {
  OX_ASSIGN_OR_RETURN(std::string_view model, file.get_string("tokenizer.ggml.model"));
  v->model_name = std::string(model);
  OX_ASSIGN_OR_RETURN(std::string_view pre, file.get_string_or("tokenizer.ggml.pre", ""));
  v->pre_name = std::string(pre);
  OX_TRY(set_model_defaults(file, v));
  OX_TRY(set_family_flags(file, v));
  OX_TRY(load_tokens(file, v));
  if (v->type == VocabType::kBpe) OX_TRY(load_merges(file, v));
  if (v->type == VocabType::kSpm) v->spm_word_split = marks_only_lead(*v);
  if (v->type == VocabType::kUgm) OX_TRY(load_charsmap(file, v));
  OX_TRY(load_special_ids(file, v));
  OX_ASSIGN_OR_RETURN(std::string_view general_name, file.get_string_or("general.name", ""));
  OX_ASSIGN_OR_RETURN(std::string_view arch, file.get_string_or("general.architecture", ""));
  finish_special_tokens(general_name, arch, v);
  OX_ASSIGN_OR_RETURN(std::string_view tmpl, file.get_string_or("tokenizer.chat_template", ""));
  v->chat_template = std::string(tmpl);
  return Status::ok();
}

}  // namespace ox::tok
