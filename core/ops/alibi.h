// ALiBi (attention with linear biases: bloom, mpt, jais, jina-bert-v2): head h adds
// slope(h) * -|j - i| to the score of query position i against key position j, in place of
// position embeddings (j - i where attention is causal).
#pragma once

#include <cstdint>

namespace ox {

// The slope of head `head` of n_head, as ggml's soft_max_ext / flash_attn_ext derive it from
// max_bias: with n = the largest power of two <= n_head, heads h < n get 2^(-max_bias (h+1) / n)
// and the rest interleave between them, 2^(-max_bias (2(h-n)+1) / (2n)). max_bias 0: no bias (0).
float alibi_slope(int head, int n_head, float max_bias);

// -|j - i|: llama.cpp's mask value under ALiBi (llm_graph_input_attn_no_cache: keys after the
// query, which only an encoder sees, are as far as those before it).
inline float alibi_distance(int64_t j, int64_t i) { return -static_cast<float>(j > i ? j - i : i - j); }

}  // namespace ox
