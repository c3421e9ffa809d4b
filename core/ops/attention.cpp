// attention(): one score row per (token, head), split over threads. Two numeric modes: plain f32,
// and llama.cpp's CPU default (F16 KV cache, flash attention) for bit-level parity tests.
#include "core/ops/attention.h"

#include <cmath>
#include <cstring>

#include "core/base/exp_bounded.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

inline float round_f16(float v) { return fp16_to_f32(f32_to_fp16(v)); }

struct Row {
  const float* q;       // [head_dim_k] query of one head
  const float* keys;    // first key of this KV head; position j at keys + j * k_stride
  const float* values;  // likewise
  int64_t first, last;  // visible positions [first, last]
  float* out;           // [head_dim_v]
};

// score_j = scale * q . k_j, or c * tanh(scale * q . k_j / c) when soft-capped.
inline float score(const AttentionParams& p, const float* q, const float* k) {
  float s = 0;
  for (int d = 0; d < p.head_dim_k; ++d) s += q[d] * k[d];
  if (p.softcap > 0) return p.softcap * std::tanh(s * (p.scale / p.softcap));
  return s * p.scale;
}

// f32: scores, then their softmax, then the weighted sum of values. scores: scratch [n_kv].
// q . k goes through the kernel table's f32 dot (the score loop is most of attention's time and
// a plain C++ float reduction cannot be vectorised without reordering it).
void attend_f32(const AttentionParams& p, VecDotFn dot_f32, int64_t k_stride, int64_t v_stride, const Row& r,
                float* scores) {
  const int64_t n = r.last - r.first + 1;
  float max_s = -INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    float s = 0.0f;
    dot_f32(p.head_dim_k, &s, r.q, r.keys + (r.first + j) * k_stride);
    s = p.softcap > 0 ? p.softcap * std::tanh(s * (p.scale / p.softcap)) : s * p.scale;
    scores[j] = s;
    max_s = s > max_s ? s : max_s;
  }
  // e^(s - max) in its own loop, which vectorises; below e^-87 a weight is 0 next to the 1 of the
  // maximum, so clamping there changes nothing that is kept.
  for (int64_t j = 0; j < n; ++j) {
    const float x = scores[j] - max_s;
    scores[j] = exp_bounded(x < -87.0f ? -87.0f : x);
  }
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += scores[j];
  const float inv = 1.0f / sum;
  std::memset(r.out, 0, sizeof(float) * static_cast<size_t>(p.head_dim_v));
  // Four positions per pass over out: a quarter of the loads and stores of out, which would
  // otherwise cost as much as the multiply-adds (both loops vectorise over d).
  const float* v0 = r.values + r.first * v_stride;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float w0 = scores[j] * inv, w1 = scores[j + 1] * inv, w2 = scores[j + 2] * inv, w3 = scores[j + 3] * inv;
    const float* va = v0 + j * v_stride;
    const float* vb = va + v_stride;
    const float* vc = vb + v_stride;
    const float* vd = vc + v_stride;
    for (int d = 0; d < p.head_dim_v; ++d) r.out[d] += (w0 * va[d] + w1 * vb[d]) + (w2 * vc[d] + w3 * vd[d]);
  }
  for (; j < n; ++j) {
    const float w = scores[j] * inv;
    const float* vj = v0 + j * v_stride;
    for (int d = 0; d < p.head_dim_v; ++d) r.out[d] += w * vj[d];
  }
}

// llama.cpp's CPU flash attention over an F16 cache: q rounded to f16, then one pass of online
// softmax whose running V sum is an f16 vector (rounded after every update); divided by the
// softmax denominator at the end. acc, q16: scratch [head_dim_v], [head_dim_k].
void attend_f16(const AttentionParams& p, int64_t k_stride, int64_t v_stride, const Row& r, float* acc, float* q16) {
  for (int d = 0; d < p.head_dim_k; ++d) q16[d] = round_f16(r.q[d]);
  std::memset(acc, 0, sizeof(float) * static_cast<size_t>(p.head_dim_v));
  float max_s = -INFINITY, sum = 0;
  for (int64_t j = r.first; j <= r.last; ++j) {
    const float s = score(p, q16, r.keys + j * k_stride);
    float w = 1.0f;  // weight of v_j relative to the running maximum
    float rescale = 1.0f;
    if (s > max_s) {
      rescale = std::exp(max_s - s);
      max_s = s;
      for (int d = 0; d < p.head_dim_v; ++d) acc[d] = round_f16(acc[d] * rescale);
    } else {
      w = std::exp(s - max_s);
    }
    const float* vj = r.values + j * v_stride;
    for (int d = 0; d < p.head_dim_v; ++d) acc[d] = round_f16(acc[d] + vj[d] * w);
    sum = sum * rescale + w;
  }
  const float inv = 1.0f / sum;
  for (int d = 0; d < p.head_dim_v; ++d) r.out[d] = acc[d] * inv;
}

}  // namespace

void attention(OpContext& ctx, const float* q, int64_t n_tokens, int64_t pos0, const float* keys, int64_t k_stride,
               const float* values, int64_t v_stride, const AttentionParams& p, float* out) {
  const int64_t n_kv_max = pos0 + n_tokens;
  const int n_threads = ctx.pool->n_threads();
  // Per-thread scratch: scores [n_kv] (f32 mode) or acc [head_dim_v] + q16 [head_dim_k] (f16 mode).
  const int64_t per_thread = p.f16 ? p.head_dim_v + p.head_dim_k : n_kv_max;
  const size_t need = static_cast<size_t>(n_threads) * static_cast<size_t>(per_thread);
  if (ctx.float_scratch.size() < need) ctx.float_scratch.resize(need);
  const int group = p.n_head / p.n_head_kv;  // query heads sharing one KV head
  const int64_t n_pairs = n_tokens * p.n_head;
  const VecDotFn dot_f32 = ctx.kernels->vec_dot[static_cast<uint32_t>(DType::F32)];

  auto work = [&](int index, int count) {
    float* scratch = ctx.float_scratch.data() + static_cast<size_t>(index) * static_cast<size_t>(per_thread);
    // Pairs dealt round-robin: with a causal mask, later tokens see more positions, so
    // contiguous shares would leave the thread with the last tokens most of the work.
    for (int64_t pair = index; pair < n_pairs; pair += count) {
      const int64_t t = pair / p.n_head;
      const int h = static_cast<int>(pair % p.n_head);
      const int hk = h / group;
      const int64_t pos = pos0 + t;
      Row r;
      r.q = q + (t * p.n_head + h) * p.head_dim_k;
      r.keys = keys + static_cast<int64_t>(hk) * p.head_dim_k;
      r.values = values + static_cast<int64_t>(hk) * p.head_dim_v;
      r.first = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
      r.last = pos;
      r.out = out + (t * p.n_head + h) * p.head_dim_v;
      if (p.f16) {
        attend_f16(p, k_stride, v_stride, r, scratch, scratch + p.head_dim_v);
      } else {
        attend_f32(p, dot_f32, k_stride, v_stride, r, scratch);
      }
    }
  };
  // Work ~ pairs x visible positions x (score + value) dims; short decode steps stay on this thread.
  parallel_for_work(ctx, n_pairs * n_kv_max * (p.head_dim_k + p.head_dim_v), work);
}

}  // namespace ox
