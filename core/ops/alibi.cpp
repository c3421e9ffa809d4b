// alibi_slope: ggml's formula (powf of the two bases m0, m1), so the f32 bits match llama.cpp's.
#include "core/ops/alibi.h"

#include <cmath>

namespace ox {

float alibi_slope(int head, int n_head, float max_bias) {
  if (!(max_bias > 0.0f)) return 0.0f;
  const int n_head_log2 = 1 << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
  const float m0 = std::pow(2.0f, -max_bias / static_cast<float>(n_head_log2));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / static_cast<float>(n_head_log2));
  return head < n_head_log2 ? std::pow(m0, static_cast<float>(head + 1))
                            : std::pow(m1, static_cast<float>(2 * (head - n_head_log2) + 1));
}

}  // namespace ox
