// Causal multi-head attention over a KV cache, with grouped-query heads, optional sliding window
// and optional logit soft-capping. Never materialises the [n_tokens x n_kv] score matrix: each
// (token, head) pair computes one score row in per-thread scratch.
#pragma once

#include <cstdint>

#include "core/ops/ops.h"

namespace ox {

struct AttentionParams {
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim_k = 0;
  int head_dim_v = 0;
  float scale = 1.0f;    // applied to q.k (usually 1/sqrt(head_dim))
  float softcap = 0.0f;  // if > 0: score = softcap * tanh(score / softcap)
  int window = 0;        // if > 0: token at pos sees positions (pos - window, pos]
  // false: f32 throughout. true: llama.cpp's CPU defaults (F16 KV cache + flash attention): q is
  // rounded to f16 and the running softmax-weighted sum of values is kept in f16. The caller
  // stores keys and values already rounded to f16 (round_to_f16). For parity tests.
  bool f16 = false;
};

// q: [n_tokens][n_head * head_dim_k]; keys/values: rows of the cache for positions 0..pos0+n_tokens-1,
// row strides k_stride / v_stride floats. out: [n_tokens][n_head * head_dim_v].
void attention(OpContext& ctx, const float* q, int64_t n_tokens, int64_t pos0, const float* keys, int64_t k_stride,
               const float* values, int64_t v_stride, const AttentionParams& p, float* out);

}  // namespace ox
