// attention(): one score row per (token, head), split over threads.
#include "core/ops/attention.h"

#include <cmath>
#include <cstring>

namespace ox {

void attention(OpContext& ctx, const float* q, int64_t n_tokens, int64_t pos0, const float* keys, int64_t k_stride,
               const float* values, int64_t v_stride, const AttentionParams& p, float* out) {
  const int64_t n_kv_max = pos0 + n_tokens;
  const int n_threads = ctx.pool->n_threads();
  const size_t need = static_cast<size_t>(n_threads) * static_cast<size_t>(n_kv_max);
  if (ctx.float_scratch.size() < need) ctx.float_scratch.resize(need);
  const int group = p.n_head / p.n_head_kv;  // query heads sharing one KV head
  const int64_t n_pairs = n_tokens * p.n_head;

  auto work = [&](int index, int count) {
    float* scores = ctx.float_scratch.data() + static_cast<size_t>(index) * n_kv_max;
    int64_t b, e;
    split_range(n_pairs, index, count, 1, &b, &e);
    for (int64_t pair = b; pair < e; ++pair) {
      const int64_t t = pair / p.n_head;
      const int h = static_cast<int>(pair % p.n_head);
      const int hk = h / group;
      const int64_t pos = pos0 + t;
      const int64_t first = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
      const float* qh = q + (t * p.n_head + h) * p.head_dim_k;
      // scores[j] = scale * q . k_j for j in [first, pos]
      float max_s = -INFINITY;
      for (int64_t j = first; j <= pos; ++j) {
        const float* kj = keys + j * k_stride + static_cast<int64_t>(hk) * p.head_dim_k;
        float s = 0;
        for (int d = 0; d < p.head_dim_k; ++d) s += qh[d] * kj[d];
        s *= p.scale;
        if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
        scores[j - first] = s;
        max_s = s > max_s ? s : max_s;
      }
      const int64_t n = pos - first + 1;
      float sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        scores[j] = std::exp(scores[j] - max_s);
        sum += scores[j];
      }
      const float inv = 1.0f / sum;
      float* oh = out + (t * p.n_head + h) * p.head_dim_v;
      std::memset(oh, 0, sizeof(float) * p.head_dim_v);
      for (int64_t j = 0; j < n; ++j) {
        const float w = scores[j] * inv;
        const float* vj = values + (first + j) * v_stride + static_cast<int64_t>(hk) * p.head_dim_v;
        for (int d = 0; d < p.head_dim_v; ++d) oh[d] += w * vj[d];
      }
    }
  };
  parallel_for_work(ctx, n_pairs * n_kv_max * (p.head_dim_k + p.head_dim_v), work);
}

}  // namespace ox
