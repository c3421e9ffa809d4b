// Causal multi-head attention over a KV cache, with grouped-query heads, optional sliding window,
// optional logit soft-capping and optional ALiBi biases: fused and tiled (flash attention). Keys and values are read in
// the cache's own format (F16, BF16, F32 or a 32-element block format) a tile of positions at a
// time, scores go through a running (online) softmax, and no [n_tokens x n_kv] score matrix is
// ever formed: per thread, a tile of scores for the query rows of one KV head.
#pragma once

#include <cstdint>

#include "core/ops/ops.h"
#include "core/quant/dtype.h"

namespace ox {

struct AttentionParams {
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim_k = 0;
  int head_dim_v = 0;
  float scale = 1.0f;    // applied to q.k (usually 1/sqrt(head_dim))
  float softcap = 0.0f;  // if > 0: score = softcap * tanh(score / softcap)
  int window = 0;        // if > 0: token at pos sees positions (pos - window, pos]
  // > 0: ALiBi (alibi.h): head h's score of position j from position pos gains
  // alibi_slope(h, n_head, alibi_max_bias) * -|j - pos|, after scaling and soft-capping.
  float alibi_max_bias = 0.0f;
  bool chunked = false;  // the window is a chunk instead: [pos / window * window, pos] (llama4)
  // The window is [pos - window / 2, pos + window / 2] instead (llama.cpp's LLAMA_SWA_TYPE_SYMMETRIC:
  // gemma-embedding, whose attention is not causal).
  bool symmetric = false;
  // [n_head] or null: a logit per head that joins the softmax's denominator but weighs no value
  // (gpt-oss's attention sinks).
  const float* sinks = nullptr;
  // llama.cpp's CPU decode path over an F16 cache, for bit-level parity tests (Numerics::kLlamaCpp):
  // the running softmax-weighted sum of values kept in f16 and rounded after every update. Needs
  // F16 values. Otherwise that sum is f32 (more accurate, and what llama.cpp does for prefill).
  bool f16_accumulator = false;
  // false: every query sees every key of its sequence held so far (encoders: bert), not only those
  // at or before its own position. The whole sequence is then evaluated in one call.
  bool causal = true;
  // T5 (relative_bias.h): head h's score of key position j from the query at pos gains
  // rel_bias[(j - pos) * n_head + h]; the table holds every offset of the keys visible (points at
  // offset 0's row). Added unscaled, after the scale and before the softmax, as llama.cpp's kq_b.
  const float* rel_bias = nullptr;
};

// One layer of the cache as attention reads it: position j's keys (every KV head, in type_k) at
// k + (j - pos_first) * k_row_bytes, its values likewise. A head's keys are whole blocks of type_k.
// Positions before pos_first are not held (a sliding-window layer's cache keeps only the window)
// and are seen by no query.
struct KvLayerView {
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  uint64_t k_row_bytes = 0;
  uint64_t v_row_bytes = 0;
  DType type_k = DType::F16;
  DType type_v = DType::F16;
  int64_t pos_first = 0;
};

// q: [n_tokens][n_head * head_dim_k], token t at position pos0 + t, whose keys and values are
// already in the cache (positions [kv.pos_first, pos0 + n_tokens); without p.causal each token sees
// all of them). out: [n_tokens][n_head * head_dim_v].
void attention(OpContext& ctx, const float* q, int64_t n_tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionParams& p, float* out);

// How attention() shares a call's work out (exposed so tests can check it without timing): items
// of block_tokens tokens per KV head, each over n_chunks chunks of positions, chunk c covering
// [first + c * chunk_len, first + (c + 1) * chunk_len) clipped to end. [first, end) is every
// position some token of the call sees, first rounded down to a tile: a sliding-window layer's
// chunks cut its window, not every position the cache holds. visible: the positions the last
// token sees (the work estimate that decides whether to use more than one thread).
struct AttentionSplit {
  int64_t first = 0;
  int64_t end = 0;
  int64_t visible = 0;
  int64_t block_tokens = 1;
  int64_t n_chunks = 1;
  int64_t chunk_len = 0;
};
AttentionSplit attention_split(int64_t n_tokens, int64_t pos0, int64_t pos_first, const AttentionParams& p,
                               int n_threads);

// Positions of one KV tile (and of one softmax update): 64 keeps a tile's f32 values of a 128-wide
// head in 32 KiB and the scores of its query rows in L1.
inline constexpr int64_t kAttentionTile = 64;

}  // namespace ox
