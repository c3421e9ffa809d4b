// KvCache: keys and values of every past position of n_seq sequences, per layer, each row stored
// in the cache's element format (f16 by default, as llama.cpp; f32, bf16 or a 32-element block
// format). Layout: per layer, per sequence (llama.cpp's non-unified cache, one stream per
// sequence), [n_ctx] rows of n_head_kv * head_dim elements for K and for V, so one position's
// heads are adjacent and a head's rows are k_row_bytes apart. Sequence s holds positions
// [0, n_pos(s)). Recurrent and hybrid models also keep a fixed-size state per layer and sequence
// (recurrent_state.h) in the same cache: sized, counted, copied, saved and cleared with the rows.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/base/big_buffer.h"
#include "core/base/status.h"
#include "core/kv_cache/recurrent_state.h"
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

  // The recurrent layers' state (empty for a pure transformer). A sequence's state summarises
  // positions [0, n_pos(seq)); whoever writes it keeps n_pos in step.
  bool has_recurrent() const { return !rs_.empty(); }
  RecurrentState& rs() { return rs_; }
  const RecurrentState& rs() const { return rs_; }

  // Row of position pos of sequence seq in layer `layer`; the rows of one (layer, seq) are adjacent.
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
  void set_n_pos(int seq, int64_t n);

  // Moves positions [from, from + count) of sequence seq in every layer to [to, to + count) (ranges
  // may overlap): what a context shift does after dropping positions.
  void move_rows(int seq, int64_t from, int64_t to, int64_t count);

  // llama_memory_seq_cp: positions [p0, p1) of sequence src, every layer, copied to the same
  // positions of sequence dst (a prompt prefix evaluated once, shared by several sequences). dst
  // then holds [0, p1): its rows before p0 are kept, whatever it held from p1 on is dropped.
  // Errors: a sequence out of range, src == dst, a range src does not hold, or p0 past what dst
  // holds (a gap). With recurrent state, whose positions cannot be told apart, only the whole of
  // src can be copied ([0, n_pos(src))).
  Status seq_cp(int src, int dst, int64_t p0, int64_t p1);

  // Every byte of positions [0, n) of sequence seq in every layer, K then V per layer, then the
  // recurrent state of every layer if any (saved state; n must then be n_pos(seq), the positions
  // the state summarises). mutable_ranges is for filling them: seq holds n positions afterwards.
  std::vector<std::span<const uint8_t>> ranges(int64_t n, int seq = 0) const;
  std::vector<std::span<uint8_t>> mutable_ranges(int64_t n, int seq = 0);

 private:
  uint64_t row_index(int layer, int seq, int64_t pos) const {
    return (static_cast<uint64_t>(layer) * static_cast<uint64_t>(shape_.n_seq) + static_cast<uint64_t>(seq)) *
               static_cast<uint64_t>(shape_.n_ctx) +
           static_cast<uint64_t>(pos);
  }
  KvCacheShape shape_;
  uint64_t k_row_bytes_ = 0, v_row_bytes_ = 0;
  BigBuffer k_, v_;  // zeroed pages from the OS (big_buffer.h)
  RecurrentState rs_;
  std::vector<int64_t> n_pos_;  // [n_seq]
};

}  // namespace ox
