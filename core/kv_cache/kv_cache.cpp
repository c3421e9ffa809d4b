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

// Rows per sequence of each layer: n_ctx, or for a sliding-window layer (unless swa_full) its
// window, a batch and a tile (make_room keeps the window - 1 positions before a batch, from a tile
// boundary on: up to window + kAttentionTile - 2 rows, then the batch's).
std::vector<int64_t> rows_per_layer(const KvCacheShape& s) {
  const int64_t window_rows = std::min<int64_t>(s.n_ctx, int64_t{s.window} + s.n_batch + kAttentionTile);
  std::vector<int64_t> rows(static_cast<size_t>(s.n_layer), s.n_ctx);
  for (size_t l = 0; l < rows.size() && l < s.sliding.size(); ++l) {
    if (s.sliding[l] && !s.swa_full && s.window > 0) rows[l] = window_rows;
  }
  return rows;
}

}  // namespace

Result<uint64_t> KvCache::bytes_needed(const KvCacheShape& s) {
  OX_TRY(check_type(s.type_k, s.head_dim_k, "K"));
  OX_TRY(check_type(s.type_v, s.head_dim_v, "V"));
  if (s.n_seq < 1) return error(ErrorCode::kInvalidArgument, strfmt("%d sequences: need at least 1", s.n_seq));
  if (!s.sliding.empty() && (s.sliding.size() != static_cast<size_t>(s.n_layer) || s.window < 1 || s.n_batch < 1)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("sliding-window layers need a flag per layer (%zu for %d layers), a window (%d) and a batch "
                        "size (%d)",
                        s.sliding.size(), s.n_layer, s.window, s.n_batch));
  }
  uint64_t rows = 0;
  for (int64_t r : rows_per_layer(s)) rows += static_cast<uint64_t>(s.n_seq) * static_cast<uint64_t>(r);
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
  c.rows_ = rows_per_layer(shape);
  c.window_rows_ = shape.n_ctx;
  uint64_t rows = 0;
  for (int l = 0; l < shape.n_layer; ++l) {
    const int64_t r = c.rows_[static_cast<size_t>(l)];
    if (c.sliding(l)) c.window_rows_ = std::min(c.window_rows_, r);
    c.layer_base_.push_back(rows);
    rows += static_cast<uint64_t>(shape.n_seq) * static_cast<uint64_t>(r);
  }
  OX_ASSIGN_OR_RETURN(c.k_, BigBuffer::zeroed(rows * c.k_row_bytes_));
  OX_ASSIGN_OR_RETURN(c.v_, BigBuffer::zeroed(rows * c.v_row_bytes_));
  OX_ASSIGN_OR_RETURN(c.rs_, RecurrentState::create(recurrent_shape(shape)));
  c.n_pos_.assign(static_cast<size_t>(shape.n_seq), 0);
  c.window_first_.assign(static_cast<size_t>(shape.n_seq), 0);
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
  int64_t& first = window_first_[static_cast<size_t>(seq)];
  first = std::min(first, n);
}

void KvCache::move_window_rows(int seq, int64_t from, int64_t to, int64_t count) {
  if (count <= 0 || from == to || k_.size() == 0) return;
  const int64_t first = window_first(seq);
  for (int l = 0; l < shape_.n_layer; ++l) {
    if (!sliding(l)) continue;
    OX_CHECK(from >= 0 && to >= 0 && from + count <= layer_rows(l) && to + count <= layer_rows(l));
    std::memmove(k(l, seq, first + to), k(l, seq, first + from), static_cast<size_t>(count) * k_row_bytes_);
    if (v_row_bytes_ > 0) {
      std::memmove(v(l, seq, first + to), v(l, seq, first + from), static_cast<size_t>(count) * v_row_bytes_);
    }
  }
}

void KvCache::make_room(int seq, int64_t pos0, int64_t n) {
  OX_CHECK(seq >= 0 && seq < n_seq() && pos0 >= 0 && n >= 0 && pos0 <= n_pos(seq) && pos0 + n <= n_ctx());
  set_n_pos(seq, pos0);
  if (shape_.sliding.empty() || shape_.swa_full) return;
  const int64_t first = window_first(seq);
  const int64_t rows = window_rows_;
  if (pos0 + n - first <= rows) return;
  // The batch's first position sees back to pos0 - window + 1; from the tile that holds it on, so
  // attention's tiles (kAttentionTile-aligned positions) never start before the rows do.
  const int64_t keep = std::max(first, (pos0 - shape_.window + 1) / kAttentionTile * kAttentionTile);
  move_window_rows(seq, keep - first, 0, pos0 - keep);
  window_first_[static_cast<size_t>(seq)] = keep;
  OX_CHECK(pos0 + n - keep <= rows);
}

bool KvCache::can_resume(int seq, int64_t pos) const {
  const int64_t first = window_first(seq);
  return pos <= n_pos(seq) && (first == 0 || pos - (shape_.window - 1) >= first);
}

void KvCache::drop_positions(int seq, int64_t p0, int64_t p1) {
  const int64_t n = n_pos(seq), first = window_first(seq);
  OX_CHECK(0 <= p0 && p0 <= p1 && p1 <= n);
  const int64_t d = p1 - p0;
  if (d == 0) return;
  for (int l = 0; l < shape_.n_layer && k_.size() > 0 && p1 < n; ++l) {
    if (sliding(l)) continue;
    std::memmove(k(l, seq, p0), k(l, seq, p1), static_cast<size_t>(n - p1) * k_row_bytes_);
    // MLA caches (deepseek2) keep no V rows: V is read back out of the compressed K.
    if (v_row_bytes_ > 0) std::memmove(v(l, seq, p0), v(l, seq, p1), static_cast<size_t>(n - p1) * v_row_bytes_);
  }
  // Sliding-window layers hold [first, n): what survives after the dropped range moves down to
  // follow what survives before it; with nothing before it, the held range starts where it lands.
  const int64_t from = std::max(p1, first);
  const int64_t new_first = first <= p0 ? first : from - d;
  move_window_rows(seq, from - first, from - d - new_first, n - from);
  window_first_[static_cast<size_t>(seq)] = new_first;
  n_pos_[static_cast<size_t>(seq)] = n - d;
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
  set_n_pos(dst, p0);
  // Sliding-window layers: dst keeps [first, p0) of its own and gets [from, p1) of src's, where src
  // holds them; a gap (src's rows start after p0) leaves dst only src's. At most its rows, the last.
  const int64_t src_first = window_first(src);
  const int64_t from = std::min(std::max(p0, src_first), p1);
  int64_t first = from > p0 ? from : window_first(dst);
  const int64_t rows = window_rows_;
  first = std::max(first, p1 - rows);
  if (first < p0) move_window_rows(dst, first - window_first(dst), 0, p0 - first);
  window_first_[static_cast<size_t>(dst)] = first;
  const int64_t copy_from = std::max(from, first);
  // A pure recurrent model has no K/V rows (null data: memcpy's arguments must not be null).
  for (int l = 0; l < shape_.n_layer && k_.size() > 0; ++l) {
    const int64_t a = sliding(l) ? copy_from : p0;
    const size_t n = static_cast<size_t>(p1 - a);
    if (n == 0) continue;
    std::memcpy(k(l, dst, a), k(l, src, a), n * k_row_bytes_);
    if (v_row_bytes_ > 0) std::memcpy(v(l, dst, a), v(l, src, a), n * v_row_bytes_);
  }
  n_pos_[static_cast<size_t>(dst)] = p1;
  return Status::ok();
}

std::vector<std::span<const uint8_t>> KvCache::ranges(int64_t n, int seq) const {
  OX_CHECK(seq >= 0 && seq < n_seq() && n >= 0 && n <= n_pos(seq));
  const int64_t first = saved_first(n, seq);
  std::vector<std::span<const uint8_t>> out;
  for (int l = 0; l < shape_.n_layer; ++l) {
    const int64_t rows = saved_rows(l, n, first);
    const int64_t from = n - rows;
    out.emplace_back(rows > 0 ? k(l, seq, from) : k_.data(), static_cast<size_t>(rows) * k_row_bytes_);
    out.emplace_back(rows > 0 && v_row_bytes_ > 0 ? v(l, seq, from) : v_.data(), static_cast<size_t>(rows) * v_row_bytes_);
  }
  for (std::span<const uint8_t> r : rs_.ranges(seq)) out.push_back(r);
  return out;
}

uint64_t KvCache::saved_bytes(int64_t n, int64_t first) const {
  uint64_t total = 0;
  for (int l = 0; l < shape_.n_layer; ++l) {
    total += static_cast<uint64_t>(saved_rows(l, n, first)) * (k_row_bytes_ + v_row_bytes_);
  }
  for (std::span<const uint8_t> r : rs_.ranges(0)) total += r.size();
  return total;
}

void KvCache::restore(int seq, int64_t n, int64_t first, const uint8_t* bytes) {
  OX_CHECK(seq >= 0 && seq < n_seq() && n >= 0 && n <= n_ctx() && first >= 0 && first <= n);
  const int64_t rows = window_rows_;
  n_pos_[static_cast<size_t>(seq)] = n;
  window_first_[static_cast<size_t>(seq)] = std::max(first, n - rows);
  for (int l = 0; l < shape_.n_layer; ++l) {
    const int64_t saved = saved_rows(l, n, first);
    const int64_t held = n - first_pos(l, seq);  // the last `held` of the `saved` rows
    for (auto [row_bytes, is_k] : {std::pair{k_row_bytes_, true}, std::pair{v_row_bytes_, false}}) {
      const uint8_t* from = bytes + static_cast<uint64_t>(saved - held) * row_bytes;
      if (held > 0 && row_bytes > 0) {
        std::memcpy(is_k ? k(l, seq, n - held) : v(l, seq, n - held), from, static_cast<size_t>(held) * row_bytes);
      }
      bytes += static_cast<uint64_t>(saved) * row_bytes;
    }
  }
  for (std::span<uint8_t> r : rs_.mutable_ranges(seq)) {
    if (!r.empty()) std::memcpy(r.data(), bytes, r.size());
    bytes += r.size();
  }
}

KvLayerView KvCache::layer_view(int layer, int seq) const {
  const int64_t first = first_pos(layer, seq);
  KvLayerView view;
  view.k = k_.data() + row_index(layer, seq, first) * k_row_bytes_;
  view.v = v_row_bytes_ > 0 ? v_.data() + row_index(layer, seq, first) * v_row_bytes_ : nullptr;
  view.k_row_bytes = k_row_bytes_;
  view.v_row_bytes = v_row_bytes_;
  view.type_k = shape_.type_k;
  view.type_v = shape_.type_v;
  view.pos_first = first;
  return view;
}

}  // namespace ox
