// KvCache: keys and values of every past position, per layer, each row stored in the cache's
// element format (f16 by default, as llama.cpp; f32, bf16 or a 32-element block format).
// Layout per layer: [n_ctx] rows of n_head_kv * head_dim elements for K and for V, so one
// position's heads are adjacent and a head's rows are k_row_bytes apart.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/base/status.h"
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
  int k_dim() const { return shape_.k_dim; }
  int v_dim() const { return shape_.v_dim; }
  DType type_k() const { return shape_.type_k; }
  DType type_v() const { return shape_.type_v; }
  uint64_t k_row_bytes() const { return k_row_bytes_; }  // one position, every head
  uint64_t v_row_bytes() const { return v_row_bytes_; }
  uint64_t bytes() const { return k_.size() + v_.size(); }

  uint8_t* k(int layer, int64_t pos) { return k_.data() + (static_cast<uint64_t>(layer) * n_ctx() + pos) * k_row_bytes_; }
  uint8_t* v(int layer, int64_t pos) { return v_.data() + (static_cast<uint64_t>(layer) * n_ctx() + pos) * v_row_bytes_; }
  const uint8_t* k(int layer, int64_t pos) const {
    return k_.data() + (static_cast<uint64_t>(layer) * n_ctx() + pos) * k_row_bytes_;
  }
  const uint8_t* v(int layer, int64_t pos) const {
    return v_.data() + (static_cast<uint64_t>(layer) * n_ctx() + pos) * v_row_bytes_;
  }

  // Moves positions [from, from + count) of every layer to [to, to + count) (ranges may overlap):
  // what a context shift does after dropping positions.
  void move_rows(int64_t from, int64_t to, int64_t count);

  // Every byte of positions [0, n) of every layer, K then V per layer (saved state).
  std::vector<std::span<const uint8_t>> ranges(int64_t n) const;
  std::vector<std::span<uint8_t>> mutable_ranges(int64_t n);

 private:
  KvCacheShape shape_;
  uint64_t k_row_bytes_ = 0, v_row_bytes_ = 0;
  std::vector<uint8_t> k_, v_;
};

}  // namespace ox
