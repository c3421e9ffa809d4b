// ALiBi (attention with linear biases: bloom, mpt, jais): head h adds slope(h) * (j - i) to the
// score of query position i against key position j, in place of position embeddings.
#pragma once

namespace ox {

// The slope of head `head` of n_head, as ggml's soft_max_ext / flash_attn_ext derive it from
// max_bias: with n = the largest power of two <= n_head, heads h < n get 2^(-max_bias (h+1) / n)
// and the rest interleave between them, 2^(-max_bias (2(h-n)+1) / (2n)). max_bias 0: no bias (0).
float alibi_slope(int head, int n_head, float max_bias);

}  // namespace ox
