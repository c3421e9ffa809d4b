// KvCache allocation with explicit type and size checks, the per-sequence row operations (move,
// seq_cp) and the cache type names.
#include "core/kv_cache/kv_cache.h"

#include <cctype>
#include <cstring>

namespace ox {

std::string kv_cache_type_name(DType type) {
  std::string name = dtype_name(type);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string kv_cache_type_names() {
  std::string out;
  for (DType t : kKvCacheTypes) out += (out.empty() ? "" : ", ") + kv_cache_type_name(t);
  return out;
}

Result<DType> parse_kv_cache_type(std::string_view name, std::string_view what) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (DType t : kKvCacheTypes) {
    if (lower == kv_cache_type_name(t)) return t;
  }
  return error(ErrorCode::kInvalidArgument,
               strfmt("%.*s: unknown KV cache type '%.*s' (valid: %s)", static_cast<int>(what.size()), what.data(),
                      static_cast<int>(name.size()), name.data(), kv_cache_type_names().c_str()));
}

namespace {

RecurrentShape recurrent_shape(const KvCacheShape& s) {
  return RecurrentShape{s.n_layer, s.n_seq, s.rs_conv_dim, s.rs_ssm_dim};
}

// A block format needs whole blocks per head: attention reads one head's row at a time.
Status check_type(DType type, int head_dim, const char* which) {
  bool listed = false;
  for (DType t : kKvCacheTypes) listed = listed || t == type;
  if (!listed) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s cache type %s is not a KV cache type (valid: %s)", which,
                                                     dtype_name(type), kv_cache_type_names().c_str()));
  }
  const uint32_t block = dtype_facts(type).block_size;
  if (head_dim % static_cast<int>(block) != 0) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s cache type %s stores blocks of %u values, but this model's %s heads have %d; use f16, "
                        "bf16 or f32",
                        which, kv_cache_type_name(type).c_str(), block, which, head_dim));
  }
  return Status::ok();
}

}  // namespace

Result<uint64_t> KvCache::bytes_needed(const KvCacheShape& s) {
  OX_TRY(check_type(s.type_k, s.head_dim_k, "K"));
  OX_TRY(check_type(s.type_v, s.head_dim_v, "V"));
  if (s.n_seq < 1) return error(ErrorCode::kInvalidArgument, strfmt("%d sequences: need at least 1", s.n_seq));
  const uint64_t rows =
      static_cast<uint64_t>(s.n_layer) * static_cast<uint64_t>(s.n_seq) * static_cast<uint64_t>(s.n_ctx);
  return rows * (dtype_row_bytes(s.type_k, static_cast<uint64_t>(s.k_dim)) +
                 dtype_row_bytes(s.type_v, static_cast<uint64_t>(s.v_dim))) +
         recurrent_shape(s).bytes();
}

Result<KvCache> KvCache::create(const KvCacheShape& shape) {
  OX_ASSIGN_OR_RETURN(const uint64_t bytes, bytes_needed(shape));
  // 2 GiB: wasm32 memory is 4 GiB and must also hold the weights.
  constexpr uint64_t kLimit = (sizeof(void*) == 4) ? (uint64_t{2} << 30) : (uint64_t{64} << 30);
  if (bytes > kLimit) {
    return error(ErrorCode::kTooLarge,
                 strfmt("KV cache for %d positions x %d layers x %d sequences needs %.1f MiB, more than this build "
                        "can hold (%.0f MiB); use a smaller context size (n_ctx, or -c in the CLI), fewer sequences "
                        "or a smaller cache type (-ctk/-ctv q8_0)",
                        shape.n_ctx, shape.n_layer, shape.n_seq, bytes / 1048576.0, kLimit / 1048576.0));
  }
  KvCache c;
  c.shape_ = shape;
  c.k_row_bytes_ = dtype_row_bytes(shape.type_k, static_cast<uint64_t>(shape.k_dim));
  c.v_row_bytes_ = dtype_row_bytes(shape.type_v, static_cast<uint64_t>(shape.v_dim));
  const uint64_t rows =
      static_cast<uint64_t>(shape.n_layer) * static_cast<uint64_t>(shape.n_seq) * static_cast<uint64_t>(shape.n_ctx);
  OX_ASSIGN_OR_RETURN(c.k_, BigBuffer::zeroed(rows * c.k_row_bytes_));
  OX_ASSIGN_OR_RETURN(c.v_, BigBuffer::zeroed(rows * c.v_row_bytes_));
  OX_ASSIGN_OR_RETURN(c.rs_, RecurrentState::create(recurrent_shape(shape)));
  c.n_pos_.assign(static_cast<size_t>(shape.n_seq), 0);
  return c;
}

Status KvCache::check_seq(int seq) const {
  if (seq >= 0 && seq < n_seq()) return Status::ok();
  return error(ErrorCode::kInvalidArgument,
               strfmt("sequence %d is out of range (the cache holds sequences 0..%d)", seq, n_seq() - 1));
}

void KvCache::set_n_pos(int seq, int64_t n) {
  OX_CHECK(seq >= 0 && seq < n_seq() && n >= 0 && n <= n_ctx());
  n_pos_[static_cast<size_t>(seq)] = n;
}

void KvCache::move_rows(int seq, int64_t from, int64_t to, int64_t count) {
  OX_CHECK(seq >= 0 && seq < n_seq() && from >= 0 && to >= 0 && count >= 0);
  OX_CHECK(from + count <= n_ctx() && to + count <= n_ctx());
  if (count == 0 || from == to || k_.size() == 0) return;  // a pure recurrent model has no K/V rows
  for (int l = 0; l < shape_.n_layer; ++l) {
    std::memmove(k(l, seq, to), k(l, seq, from), static_cast<size_t>(count) * k_row_bytes_);
    // MLA caches (deepseek2) keep no V rows: V is read back out of the compressed K.
    if (v_row_bytes_ > 0) std::memmove(v(l, seq, to), v(l, seq, from), static_cast<size_t>(count) * v_row_bytes_);
  }
}

Status KvCache::seq_cp(int src, int dst, int64_t p0, int64_t p1) {
  OX_TRY(check_seq(src));
  OX_TRY(check_seq(dst));
  if (src == dst) return error(ErrorCode::kInvalidArgument, strfmt("cannot copy sequence %d onto itself", src));
  if (p0 < 0 || p1 <= p0 || p1 > n_pos(src)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("cannot copy positions [%lld, %lld) of sequence %d, which holds %lld",
                        static_cast<long long>(p0), static_cast<long long>(p1), src,
                        static_cast<long long>(n_pos(src))));
  }
  if (p0 > n_pos(dst)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("cannot copy positions from %lld into sequence %d, which holds %lld: positions would be "
                        "missing in between",
                        static_cast<long long>(p0), dst, static_cast<long long>(n_pos(dst))));
  }
  if (has_recurrent() && (p0 != 0 || p1 != n_pos(src))) {
    return error(ErrorCode::kUnsupported,
                 strfmt("cannot copy positions [%lld, %lld) of sequence %d: its recurrent state covers all %lld "
                        "positions it holds, so only the whole sequence can be copied",
                        static_cast<long long>(p0), static_cast<long long>(p1), src,
                        static_cast<long long>(n_pos(src))));
  }
  rs_.copy(src, dst);
  const size_t n = static_cast<size_t>(p1 - p0);
  // A pure recurrent model has no K/V rows (null data: memcpy's arguments must not be null).
  for (int l = 0; l < shape_.n_layer && n > 0 && k_.size() > 0; ++l) {
    std::memcpy(k(l, dst, p0), k(l, src, p0), n * k_row_bytes_);
    if (v_row_bytes_ > 0) std::memcpy(v(l, dst, p0), v(l, src, p0), n * v_row_bytes_);
  }
  set_n_pos(dst, p1);
  return Status::ok();
}

std::vector<std::span<const uint8_t>> KvCache::ranges(int64_t n, int seq) const {
  OX_CHECK(seq >= 0 && seq < n_seq() && n >= 0 && n <= n_ctx());
  std::vector<std::span<const uint8_t>> out;
  for (int l = 0; l < shape_.n_layer; ++l) {
    out.emplace_back(k(l, seq, 0), static_cast<size_t>(n) * k_row_bytes_);
    out.emplace_back(v(l, seq, 0), static_cast<size_t>(n) * v_row_bytes_);
  }
  for (std::span<const uint8_t> r : rs_.ranges(seq)) out.push_back(r);
  return out;
}

std::vector<std::span<uint8_t>> KvCache::mutable_ranges(int64_t n, int seq) {
  set_n_pos(seq, n);
  std::vector<std::span<uint8_t>> out;
  for (int l = 0; l < shape_.n_layer; ++l) {
    out.emplace_back(k(l, seq, 0), static_cast<size_t>(n) * k_row_bytes_);
    out.emplace_back(v(l, seq, 0), static_cast<size_t>(n) * v_row_bytes_);
  }
  for (std::span<uint8_t> r : rs_.mutable_ranges(seq)) out.push_back(r);
  return out;
}

}  // namespace ox
