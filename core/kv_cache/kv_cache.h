// KvCache: keys and values of every past position, per layer, in f32.
// Layout per layer: [n_ctx][n_head_kv * head_dim] for K and for V (one row per position).
#pragma once

#include <cstdint>
#include <vector>

#include <string>
#include <string_view>

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


class KvCache {
 public:
  // Checks the size before allocating (wasm aborts on out-of-memory instead of returning null).
  static Result<KvCache> create(int n_layer, int n_ctx, int k_dim, int v_dim);
  KvCache() = default;

  int n_ctx() const { return n_ctx_; }
  int k_dim() const { return k_dim_; }
  int v_dim() const { return v_dim_; }
  uint64_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

  float* k(int layer, int64_t pos) { return k_.data() + (static_cast<int64_t>(layer) * n_ctx_ + pos) * k_dim_; }
  float* v(int layer, int64_t pos) { return v_.data() + (static_cast<int64_t>(layer) * n_ctx_ + pos) * v_dim_; }

 private:
  int n_layer_ = 0, n_ctx_ = 0, k_dim_ = 0, v_dim_ = 0;
  std::vector<float> k_, v_;
};

}  // namespace ox
