// KvCache: keys and values of every past position of n_seq sequences, per layer, each row stored
// in the cache's element format (f16 by default, as llama.cpp; f32, bf16 or a 32-element block
// format). Layout: per layer, per sequence (llama.cpp's non-unified cache, one stream per
// sequence), layer_rows(layer) rows of n_head_kv * head_dim elements for K and for V, so one
// position's heads are adjacent and a head's rows are k_row_bytes apart. Sequence s holds
// positions [0, n_pos(s)). A full layer has n_ctx rows, row p for position p. A sliding-window
// layer (llama.cpp's SWA cache, swa_full off) has only window + n_batch + one attention tile rows:
// it holds positions [first_pos(s), n_pos(s)) at rows [0, n_pos - first_pos), and make_room()
// moves its last window - 1 positions to the front before a batch would write past its end.
// Recurrent and hybrid models also keep a fixed-size state per layer and sequence
// (recurrent_state.h) in the same cache: sized, counted, copied, saved and cleared with the rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/base/big_buffer.h"
#include "core/base/status.h"
#include "core/kv_cache/recurrent_state.h"
#include "core/ops/attention.h"
#include "core/quant/dtype.h"

namespace ox {

// The cache types llama.cpp offers for -ctk / -ctv, in its order.
inline constexpr DType kKvCacheTypes[] = {DType::F32,  DType::F16,    DType::BF16, DType::Q8_0, DType::Q4_0,
                                          DType::Q4_1, DType::IQ4_NL, DType::Q5_0, DType::Q5_1};

// "f16", "q8_0", ... (llama.cpp's lower-case spelling; upper case accepted) -> the type; an error
// naming `what` (e.g. "-ctk") and listing the valid names otherwise.
Result<DType> parse_kv_cache_type(std::string_view name, std::string_view what);
// "f16", "q8_0", ...: the spelling parse_kv_cache_type reads.
std::string kv_cache_type_name(DType type);
// Every valid name, comma-separated (help texts).
std::string kv_cache_type_names();

struct KvCacheShape {
  int n_layer = 0;
  int n_ctx = 0;
  int k_dim = 0;  // n_head_kv * head_dim_k elements per position
  int v_dim = 0;
  int head_dim_k = 0;  // a block format's block must not straddle two heads
  int head_dim_v = 0;
  DType type_k = DType::F16;
  DType type_v = DType::F16;
  int n_seq = 1;  // sequences, each with its own n_ctx positions per layer
  // Recurrent state per layer and sequence, in f32 (0, 0: none, a pure transformer). A pure
  // recurrent model has k_dim = v_dim = 0.
  int64_t rs_conv_dim = 0;
  int64_t rs_ssm_dim = 0;
  // Sliding-window layers (causal: a position sees itself and the window - 1 before it): sliding[l]
  // for each layer (empty: none), window the widest of their windows. Unless swa_full, they keep
  // min(n_ctx, window + n_batch + kAttentionTile) rows per sequence, n_batch being the most
  // positions of one sequence a forward pass writes (the tile: the rows start on a tile boundary).
  std::vector<bool> sliding;
  int window = 0;
  int n_batch = 0;
  bool swa_full = false;  // llama.cpp's --swa-full: sliding layers keep n_ctx rows too
};

class KvCache {
 public:
  // Checks the types against the head sizes and the size against what this build can hold
  // before allocating (wasm aborts on out-of-memory instead of returning null).
  static Result<KvCache> create(const KvCacheShape& shape);
  // Bytes create() would allocate; an error if the types do not fit the head sizes.
  static Result<uint64_t> bytes_needed(const KvCacheShape& shape);
  KvCache() = default;

  const KvCacheShape& shape() const { return shape_; }
  int n_ctx() const { return shape_.n_ctx; }
  int n_seq() const { return shape_.n_seq; }
  int k_dim() const { return shape_.k_dim; }
  int v_dim() const { return shape_.v_dim; }
  DType type_k() const { return shape_.type_k; }
  DType type_v() const { return shape_.type_v; }
  uint64_t k_row_bytes() const { return k_row_bytes_; }  // one position, every head
  uint64_t v_row_bytes() const { return v_row_bytes_; }
  uint64_t bytes() const { return k_.size() + v_.size() + rs_.bytes(); }
  // Faults in every page of the keys and values (BigBuffer::touch_pages) ahead of the first pass.
  void touch_pages() {
    k_.touch_pages();
    v_.touch_pages();
  }
  // Rows per sequence of layer `layer`: n_ctx, or fewer for a sliding-window layer.
  int64_t layer_rows(int layer) const { return rows_[static_cast<size_t>(layer)]; }
  bool has_sliding() const { return !shape_.sliding.empty(); }
  bool sliding(int layer) const { return !shape_.sliding.empty() && shape_.sliding[static_cast<size_t>(layer)]; }
  // The first position layer `layer` holds of sequence seq (0 but for sliding-window layers):
  // attention there sees no position before it.
  int64_t first_pos(int layer, int seq) const { return sliding(layer) ? window_first_[static_cast<size_t>(seq)] : 0; }
  // The same for the sliding-window layers (0 without them).
  int64_t window_first(int seq) const { return window_first_[static_cast<size_t>(seq)]; }

  // The recurrent layers' state (empty for a pure transformer). A sequence's state summarises
  // positions [0, n_pos(seq)); whoever writes it keeps n_pos in step.
  bool has_recurrent() const { return !rs_.empty(); }
  RecurrentState& rs() { return rs_; }
  const RecurrentState& rs() const { return rs_; }

  // Row of position pos of sequence seq in layer `layer` (a position that layer holds, or the next
  // ones a forward pass writes after make_room); the rows of one (layer, seq) are adjacent.
  uint8_t* k(int layer, int seq, int64_t pos) { return k_.data() + row_index(layer, seq, pos) * k_row_bytes_; }
  uint8_t* v(int layer, int seq, int64_t pos) { return v_.data() + row_index(layer, seq, pos) * v_row_bytes_; }
  const uint8_t* k(int layer, int seq, int64_t pos) const {
    return k_.data() + row_index(layer, seq, pos) * k_row_bytes_;
  }
  const uint8_t* v(int layer, int seq, int64_t pos) const {
    return v_.data() + row_index(layer, seq, pos) * v_row_bytes_;
  }

  // Positions sequence seq holds: [0, n_pos(seq)). Whoever writes rows (the forward pass, a context
  // shift, a restore) sets it; the rows past it are stale and get overwritten.
  int64_t n_pos(int seq) const { return n_pos_[static_cast<size_t>(seq)]; }
  // OK if seq is a sequence of this cache, else an error naming the valid ids.
  Status check_seq(int seq) const;
  // Below window_first(seq), the sliding-window layers hold nothing: window_first becomes n.
  void set_n_pos(int seq, int64_t n);

  // Before a forward pass writes positions [pos0, pos0 + n) of sequence seq (pos0 <= n_pos(seq)):
  // drops the positions from pos0 on, and where a sliding-window layer lacks the rows, moves the
  // positions the batch still sees (from pos0 - window + 1, rounded down to a tile) to its front.
  void make_room(int seq, int64_t pos0, int64_t n);
  // Whether evaluating sequence seq on from position pos (<= n_pos) sees every position it would
  // with a full cache: false where a sliding-window layer no longer holds the window - 1 positions
  // before pos (a cut back past them, or a context shift that kept fewer). The caller then evaluates
  // the sequence again from 0, as llama.cpp does.
  bool can_resume(int seq, int64_t pos) const;

  // Drops positions [p0, p1) of sequence seq in every layer (p1 <= n_pos(seq)); the positions after
  // them move down by p1 - p0 (their keys are not rotated: Model::shift does that). What a context
  // shift does to the rows.
  void drop_positions(int seq, int64_t p0, int64_t p1);

  // llama_memory_seq_cp: positions [p0, p1) of sequence src, every layer, copied to the same
  // positions of sequence dst (a prompt prefix evaluated once, shared by several sequences). dst
  // then holds [0, p1): its rows before p0 are kept, whatever it held from p1 on is dropped.
  // Errors: a sequence out of range, src == dst, a range src does not hold, or p0 past what dst
  // holds (a gap). With recurrent state, whose positions cannot be told apart, only the whole of
  // src can be copied ([0, n_pos(src))).
  Status seq_cp(int src, int dst, int64_t p0, int64_t p1);

  // Every byte of positions [0, n) of sequence seq that the cache holds (n <= n_pos(seq)), K then V
  // per layer (a sliding-window layer's from saved_first(n, seq) on), then the recurrent state of
  // every layer if any (saved state; n must then be n_pos(seq), the positions the state summarises).
  std::vector<std::span<const uint8_t>> ranges(int64_t n, int seq = 0) const;
  // The first position ranges(n, seq) holds of the sliding-window layers.
  int64_t saved_first(int64_t n, int seq = 0) const { return std::min(window_first(seq), n); }
  // Rows of layer `layer` in ranges() of n positions whose sliding-window layers start at `first`.
  int64_t saved_rows(int layer, int64_t n, int64_t first) const { return sliding(layer) ? n - first : n; }
  // Fills sequence seq from what ranges(n) wrote (sliding-window layers from `first` <= n), read
  // from `bytes` (saved_bytes(n, first) of them); seq then holds n positions. Where this cache's
  // sliding-window layers have fewer rows, they keep the last ones.
  void restore(int seq, int64_t n, int64_t first, const uint8_t* bytes);
  uint64_t saved_bytes(int64_t n, int64_t first) const;

  // Attention's view of layer `layer` of sequence seq: its rows from first_pos(layer, seq) on.
  KvLayerView layer_view(int layer, int seq) const;

 private:
  uint64_t row_index(int layer, int seq, int64_t pos) const {
    const size_t l = static_cast<size_t>(layer);
    const int64_t row = pos - first_pos(layer, seq);
    OX_CHECK(row >= 0 && row < rows_[l]);
    return layer_base_[l] + static_cast<uint64_t>(seq) * static_cast<uint64_t>(rows_[l]) + static_cast<uint64_t>(row);
  }
  // Moves `count` rows of sequence seq in every sliding-window layer from row `from` to row `to`.
  void move_window_rows(int seq, int64_t from, int64_t to, int64_t count);
  KvCacheShape shape_;
  uint64_t k_row_bytes_ = 0, v_row_bytes_ = 0;
  BigBuffer k_, v_;  // zeroed pages from the OS (big_buffer.h)
  RecurrentState rs_;
  std::vector<int64_t> n_pos_;         // [n_seq]
  std::vector<int64_t> window_first_;  // [n_seq] first position the sliding-window layers hold
  std::vector<int64_t> rows_;          // [n_layer] rows per sequence
  std::vector<uint64_t> layer_base_;   // [n_layer] index of the layer's first row
  int64_t window_rows_ = 0;            // rows per sequence of the sliding-window layers
};

}  // namespace ox
