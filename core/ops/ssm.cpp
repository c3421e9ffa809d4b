// ssm_conv and ssm_scan: plain loops, in ggml's order of summation (ssm.h).
#include "core/ops/ssm.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace ox {

float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

void silu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void ssm_conv(float* state, const float* x, int64_t x_stride, const float* w, int64_t channels, int k, int64_t n,
              float* out, int64_t out_stride) {
  const int64_t keep = k - 1;
  std::vector<float> window(static_cast<size_t>(keep + n));
  for (int64_t c = 0; c < channels; ++c) {
    // The channel's inputs: the k - 1 carried in the state, then the n new ones.
    float* s = state + c * keep;
    std::memcpy(window.data(), s, sizeof(float) * static_cast<size_t>(keep));
    for (int64_t t = 0; t < n; ++t) window[static_cast<size_t>(keep + t)] = x[t * x_stride + c];
    const float* wc = w + c * k;
    for (int64_t t = 0; t < n; ++t) {
      float sum = 0.0f;
      for (int i = 0; i < k; ++i) sum += window[static_cast<size_t>(t + i)] * wc[i];
      out[t * out_stride + c] = sum;
    }
    std::memcpy(s, window.data() + n, sizeof(float) * static_cast<size_t>(keep));
  }
}

void ssm_scan(float* s, const SsmScanInput& in, const SsmScanShape& sh, int64_t n, float* y, int64_t y_stride) {
  const int heads_per_group = sh.n_head / sh.n_group;
  for (int64_t t = 0; t < n; ++t) {
    const float* x = in.x + t * in.x_stride;
    const float* dt = in.dt + t * in.dt_stride;
    const float* b = in.b + t * in.bc_stride;
    const float* c = in.c + t * in.bc_stride;
    float* yt = y + t * y_stride;
    for (int h = 0; h < sh.n_head; ++h) {
      const float delta = softplus(dt[h]);
      const int g = h / heads_per_group;
      const float* bg = b + g * sh.d_state;
      const float* cg = c + g * sh.d_state;
      const float a_head = sh.a_per_state ? 0.0f : std::exp(delta * in.a[h]);
      for (int i = 0; i < sh.head_dim; ++i) {
        const int64_t ch = int64_t{h} * sh.head_dim + i;
        float* st = s + ch * sh.d_state;
        const float x_dt = x[ch] * delta;
        float sum = 0.0f;
        for (int j = 0; j < sh.d_state; ++j) {
          const float a = sh.a_per_state ? std::exp(delta * in.a[int64_t{h} * sh.d_state + j]) : a_head;
          const float v = st[j] * a + bg[j] * x_dt;
          sum += v * cg[j];
          st[j] = v;
        }
        yt[ch] = sum;
      }
    }
  }
}

}  // namespace ox
