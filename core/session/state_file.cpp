// Session::save_state / load_state and the model fingerprint (the format is in state_file.h).
// Loading validates every field and every length against the bytes before the session changes.
#include "core/session/state_file.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/base/memory.h"
#include "core/kv_cache/kv_cache.h"
#include "core/session/session.h"

namespace ox {
namespace {

struct Fnv1a {
  uint64_t h = 14695981039346656037ull;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  void add_u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    add(b, 8);
  }
  void add_string(std::string_view s) {
    add_u64(s.size());  // length first: "ab"+"c" and "a"+"bc" differ
    add(s.data(), s.size());
  }
};

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t get_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint64_t get_u64(const uint8_t* p) { return uint64_t{get_u32(p)} | uint64_t{get_u32(p + 4)} << 32; }

bool is_cache_type(uint32_t raw) {
  for (DType t : kKvCacheTypes) {
    if (static_cast<uint32_t>(t) == raw) return true;
  }
  return false;
}

std::string types_name(DType k, DType v) { return kv_cache_type_name(k) + "/" + kv_cache_type_name(v); }

// What the loading session holds; a state must match it.
struct Expected {
  uint64_t fingerprint = 0;
  int n_ctx = 0;
  int n_vocab = 0;
  int n_layer = 0;
  const KvCache* kv = nullptr;  // which layers are sliding-window ones
  DType type_k = DType::F16, type_v = DType::F16;
  uint64_t k_row_bytes = 0, v_row_bytes = 0;
  uint64_t rs_layer_bytes = 0;  // recurrent state per layer (0: a transformer)
};

struct Parsed {
  uint32_t n_tokens = 0;
  uint32_t window_first = 0;
  bool has_logits = false;
  const uint8_t* tokens = nullptr;  // n_tokens little-endian i32
  const uint8_t* logits = nullptr;  // n_vocab little-endian f32, if has_logits
  const uint8_t* kv = nullptr;      // the KV sections, back to back
};

// The header's fields, checked against the session in the order a user would want them named.
Status check_header(std::span<const uint8_t> bytes, const Expected& e, Parsed* out) {
  if (bytes.size() < kStateHeaderBytes) {
    return error(ErrorCode::kInvalidFile, strfmt("truncated at offset %zu: expected the %zu-byte header of a state file",
                                                 bytes.size(), kStateHeaderBytes));
  }
  const uint8_t* p = bytes.data();
  if (std::memcmp(p, kStateMagic, sizeof(kStateMagic)) != 0) {
    return error(ErrorCode::kInvalidFile, "not an oxidize state file (offset 0: the magic is not \"OXSTATE\")");
  }
  const uint32_t version = get_u32(p + 8);
  if (version != kStateFormatVersion) {
    return error(ErrorCode::kUnsupported, strfmt("state file format version %u at offset 8 is not supported (this "
                                                 "build reads version %u)",
                                                 version, kStateFormatVersion));
  }
  const uint32_t flags = get_u32(p + 12);
  if ((flags & ~kStateHasLogits) != 0) {
    return error(ErrorCode::kInvalidFile, strfmt("unknown flags 0x%x at offset 12", flags));
  }
  const uint64_t fingerprint = get_u64(p + 16);
  if (fingerprint != e.fingerprint) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("state file was saved from another model (hash %016llx, this model %016llx)",
                        static_cast<unsigned long long>(fingerprint), static_cast<unsigned long long>(e.fingerprint)));
  }
  const uint32_t saved_ctx = get_u32(p + 24), raw_k = get_u32(p + 28), raw_v = get_u32(p + 32);
  for (auto [raw, offset] : {std::pair{raw_k, 28}, std::pair{raw_v, 32}}) {
    if (!is_cache_type(raw)) {
      return error(ErrorCode::kInvalidFile, strfmt("KV cache type id %u at offset %d is not a cache type (%s)", raw,
                                                   offset, kv_cache_type_names().c_str()));
    }
  }
  const DType type_k = static_cast<DType>(raw_k), type_v = static_cast<DType>(raw_v);
  if (type_k != e.type_k || type_v != e.type_v) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("state file holds a %s KV cache (K/V) but this session's is %s; load it with the same "
                        "cache types (-ctk/-ctv, cacheTypeK/cacheTypeV)",
                        types_name(type_k, type_v).c_str(), types_name(e.type_k, e.type_v).c_str()));
  }
  const uint32_t n_tokens = get_u32(p + 36);
  if (n_tokens > static_cast<uint32_t>(e.n_ctx)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("state file holds %u tokens (saved from a context of %u), more than this session's context "
                        "of %d; raise the context size (-c, n_ctx)",
                        n_tokens, saved_ctx, e.n_ctx));
  }
  const uint32_t window_first = get_u32(p + 40);
  if (window_first > n_tokens || (window_first > 0 && !e.kv->has_sliding())) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("window_first %u at offset 40 is not a position of the %u tokens held by a sliding-window "
                        "layer of this model",
                        window_first, n_tokens));
  }
  out->n_tokens = n_tokens;
  out->window_first = window_first;
  out->has_logits = (flags & kStateHasLogits) != 0;
  if (out->has_logits && n_tokens == 0) {
    return error(ErrorCode::kInvalidFile, "the flags at offset 12 say logits follow, but the state holds no tokens");
  }
  return Status::ok();
}

// Sizes of the sections after the header, checked against the bytes; then the token ids.
Status check_body(std::span<const uint8_t> bytes, const Expected& e, Parsed* out) {
  const uint64_t n = out->n_tokens, size = bytes.size();
  uint64_t offset = kStateHeaderBytes;
  auto take = [&](uint64_t n_bytes, const std::string& what) -> Result<const uint8_t*> {
    if (n_bytes > size - offset) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("truncated at offset %llu: expected %s (%llu bytes), but the state ends at %llu",
                          static_cast<unsigned long long>(offset), what.c_str(),
                          static_cast<unsigned long long>(n_bytes), static_cast<unsigned long long>(size)));
    }
    const uint8_t* p = bytes.data() + offset;
    offset += n_bytes;
    return p;
  };
  OX_ASSIGN_OR_RETURN(out->tokens, take(4 * n, strfmt("%llu token ids", static_cast<unsigned long long>(n))));
  if (out->has_logits) {
    OX_ASSIGN_OR_RETURN(out->logits, take(4 * uint64_t(e.n_vocab), strfmt("%d logits", e.n_vocab)));
  }
  out->kv = bytes.data() + offset;
  for (int l = 0; l < e.n_layer; ++l) {
    const uint64_t rows = static_cast<uint64_t>(e.kv->saved_rows(l, static_cast<int64_t>(n), out->window_first));
    for (auto [row, name] : {std::pair{e.k_row_bytes, "K"}, std::pair{e.v_row_bytes, "V"}}) {
      const std::string what = strfmt("the %s cache of layer %d for %llu positions", name, l,
                                      static_cast<unsigned long long>(rows));
      OX_TRY(take(rows * row, what).status());  // read in place by load_state, from out->kv on
    }
  }
  for (int l = 0; l < e.n_layer && e.rs_layer_bytes > 0; ++l) {
    OX_TRY(take(e.rs_layer_bytes, strfmt("the recurrent state of layer %d", l)).status());
  }
  if (offset != size) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%llu trailing bytes after the end of the state at offset %llu",
                        static_cast<unsigned long long>(size - offset), static_cast<unsigned long long>(offset)));
  }
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t id = static_cast<int32_t>(get_u32(out->tokens + 4 * i));
    if (id < 0 || id >= e.n_vocab) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("token id %d at index %llu (offset %llu) is out of range (vocabulary has %d tokens)", id,
                          static_cast<unsigned long long>(i), static_cast<unsigned long long>(kStateHeaderBytes + 4 * i),
                          e.n_vocab));
    }
  }
  return Status::ok();
}

}  // namespace

uint64_t model_fingerprint(const gguf::GgufFile& file) {
  Fnv1a h;
  const Result<std::string_view> arch = file.get_string("general.architecture");
  h.add_string(arch.ok() ? arch.value() : std::string_view());
  h.add_u64(file.tensors().size());
  for (const gguf::TensorInfo& t : file.tensors()) {
    h.add_string(t.name);
    h.add_u64(static_cast<uint32_t>(dtype_file_type(t.type)));
    h.add_u64(t.dims.size());
    for (uint64_t d : t.dims) h.add_u64(d);
  }
  return h.h;
}

Result<std::vector<uint8_t>> Session::save_state() const {
  const KvCache& kv = state_->kv;
  const uint64_t n = tokens_.size();
  const int64_t window_first = kv.saved_first(static_cast<int64_t>(n));
  const uint64_t kv_bytes = kv.saved_bytes(static_cast<int64_t>(n), window_first);
  const uint64_t total = kStateHeaderBytes + 4 * n + (logits_valid_ ? 4 * logits_.size() : 0) + kv_bytes;
  OX_TRY(check_memory(total, "the saved state", "save a shorter context"));
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(total));
  out.insert(out.end(), kStateMagic, kStateMagic + sizeof(kStateMagic));
  put_u32(out, kStateFormatVersion);
  put_u32(out, logits_valid_ ? kStateHasLogits : 0);
  put_u64(out, model_fingerprint(model_->file()));
  put_u32(out, static_cast<uint32_t>(n_ctx_));
  put_u32(out, static_cast<uint32_t>(kv.type_k()));
  put_u32(out, static_cast<uint32_t>(kv.type_v()));
  put_u32(out, static_cast<uint32_t>(n));
  put_u32(out, static_cast<uint32_t>(window_first));
  for (int32_t id : tokens_) put_u32(out, static_cast<uint32_t>(id));
  if (logits_valid_) {
    for (float f : logits_) {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put_u32(out, bits);
    }
  }
  for (std::span<const uint8_t> r : kv.ranges(static_cast<int64_t>(n))) out.insert(out.end(), r.begin(), r.end());
  OX_CHECK(out.size() == total);
  return out;
}

Status Session::load_state(std::span<const uint8_t> bytes) {
  KvCache& kv = state_->kv;
  Expected e;
  e.fingerprint = model_fingerprint(model_->file());
  e.n_ctx = n_ctx_;
  e.n_vocab = model_->hparams().n_vocab;
  e.n_layer = kv.shape().n_layer;
  e.kv = &kv;
  e.type_k = kv.type_k();
  e.type_v = kv.type_v();
  e.k_row_bytes = kv.k_row_bytes();
  e.v_row_bytes = kv.v_row_bytes();
  e.rs_layer_bytes = static_cast<uint64_t>(kv.shape().rs_conv_dim + kv.shape().rs_ssm_dim) * sizeof(float);
  Parsed p;
  OX_TRY(check_header(bytes, e, &p));
  OX_TRY(check_body(bytes, e, &p));
  // Everything is checked: from here nothing fails.
  tokens_.resize(p.n_tokens);
  for (uint32_t i = 0; i < p.n_tokens; ++i) tokens_[i] = static_cast<int32_t>(get_u32(p.tokens + 4 * size_t{i}));
  logits_valid_ = p.has_logits;
  if (p.has_logits) {
    for (size_t i = 0; i < logits_.size(); ++i) {
      const uint32_t bits = get_u32(p.logits + 4 * i);
      std::memcpy(&logits_[i], &bits, 4);
    }
  }
  kv.restore(0, p.n_tokens, p.window_first, p.kv);
  return Status::ok();
}

}  // namespace ox
