// relative_position_bucket and the per-offset bias table attention() reads (AttentionParams::rel_bias).
#include "core/ops/relative_bias.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ox {

int32_t relative_position_bucket(int64_t offset, int n_buckets, bool bidirectional) {
  constexpr int64_t kMaxDistance = 128;  // T5's (llama.cpp: "move to hparams if a variant differs")
  int64_t buckets = n_buckets;
  if (bidirectional) buckets >>= 1;
  const int64_t max_exact = buckets >> 1;
  int32_t bucket = 0;
  int64_t distance = 0;
  if (bidirectional) {
    bucket += offset > 0 ? static_cast<int32_t>(buckets) : 0;
    distance = std::llabs(offset);
  } else {
    distance = -std::min<int64_t>(offset, 0);
  }
  if (distance < max_exact) return bucket + static_cast<int32_t>(distance);
  // llama.cpp: floorf(max_exact + logf(1.0 * d / max_exact) * (buckets - max_exact) / log(1.0 * 128 / max_exact)):
  // a float logarithm times a float, divided by a double logarithm, floored as a float.
  const float lg = std::log(static_cast<float>(1.0 * static_cast<double>(distance) / static_cast<double>(max_exact)));
  const float scaled = lg * static_cast<float>(buckets - max_exact);
  const double v = static_cast<double>(max_exact) +
                   static_cast<double>(scaled) / std::log(1.0 * kMaxDistance / static_cast<double>(max_exact));
  const int64_t large = static_cast<int64_t>(std::floor(static_cast<float>(v)));
  return bucket + static_cast<int32_t>(std::min<int64_t>(large, buckets - 1));
}

void relative_bias_table(const float* rel_b, int n_head, int n_buckets, bool bidirectional, int64_t n, float* out) {
  for (int64_t offset = 1 - n; offset < n; ++offset) {
    const int32_t b = relative_position_bucket(offset, n_buckets, bidirectional);
    std::copy(rel_b + static_cast<int64_t>(b) * n_head, rel_b + static_cast<int64_t>(b + 1) * n_head,
              out + (offset + n - 1) * n_head);
  }
}

}  // namespace ox
