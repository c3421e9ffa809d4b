// KvCache allocation with an explicit size check.
#include "core/kv_cache/kv_cache.h"

#include <cctype>

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


Result<KvCache> KvCache::create(int n_layer, int n_ctx, int k_dim, int v_dim) {
  const uint64_t elems = static_cast<uint64_t>(n_layer) * static_cast<uint64_t>(n_ctx) *
                         (static_cast<uint64_t>(k_dim) + static_cast<uint64_t>(v_dim));
  const uint64_t bytes = elems * sizeof(float);
  // 2 GiB: wasm32 memory is 4 GiB and must also hold the weights.
  constexpr uint64_t kLimit = (sizeof(void*) == 4) ? (uint64_t{2} << 30) : (uint64_t{64} << 30);
  if (bytes > kLimit) {
    return error(ErrorCode::kTooLarge,
                 strfmt("KV cache for %d positions x %d layers needs %.1f MiB, more than this build can hold "
                        "(%.0f MiB); use a smaller context size (n_ctx, or -c in the CLI)",
                        n_ctx, n_layer, bytes / 1048576.0, kLimit / 1048576.0));
  }
  KvCache c;
  c.n_layer_ = n_layer;
  c.n_ctx_ = n_ctx;
  c.k_dim_ = k_dim;
  c.v_dim_ = v_dim;
  c.k_.assign(static_cast<size_t>(n_layer) * n_ctx * k_dim, 0.0f);
  c.v_.assign(static_cast<size_t>(n_layer) * n_ctx * v_dim, 0.0f);
  return c;
}

}  // namespace ox
