// gated_delta_rule: the plain loops of delta_net.h.
#include "core/ops/delta_net.h"

#include <cmath>
#include <vector>

namespace ox {

void gated_delta_rule(float* m, const DeltaNetInput& in, int n_v_head, int n_k_head, int s, int64_t n, float* y,
                      int64_t y_stride) {
  const int64_t S = s;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  std::vector<float> delta(static_cast<size_t>(S));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < n_v_head; ++h) {
      const int64_t kh = h % n_k_head;
      const float* q = in.q + t * in.qk_stride + kh * S;
      const float* k = in.k + t * in.qk_stride + kh * S;
      const float* v = in.v + t * in.v_stride + h * S;
      const float decay = std::exp(in.g[t * n_v_head + h]);
      const float beta = in.beta[t * n_v_head + h];
      float* mh = m + h * S * S;
      for (int64_t i = 0; i < S * S; ++i) mh[i] *= decay;
      for (int64_t j = 0; j < S; ++j) {
        float sum = 0.0f;
        for (int64_t i = 0; i < S; ++i) sum += mh[j * S + i] * k[i];
        delta[static_cast<size_t>(j)] = (v[j] - sum) * beta;
      }
      for (int64_t j = 0; j < S; ++j) {
        for (int64_t i = 0; i < S; ++i) mh[j * S + i] += delta[static_cast<size_t>(j)] * k[i];
      }
      float* yh = y + t * y_stride + h * S;
      for (int64_t j = 0; j < S; ++j) {
        float sum = 0.0f;
        for (int64_t i = 0; i < S; ++i) sum += mh[j * S + i] * q[i];
        yh[j] = sum * scale;
      }
    }
  }
}

}  // namespace ox
