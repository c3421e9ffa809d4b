// T5's relative position bias: every attention score gains a learned value chosen by the head and
// by the bucket of the key's offset from the query: one bucket per offset up to a few positions,
// then logarithmically wider ones up to 128 positions, beyond which offsets share the last bucket.
#pragma once

#include <cstdint>

namespace ox {

// The bucket of a key at `offset` positions from its query (key position - query position), of
// n_buckets, as llama.cpp's llama_relative_position_bucket computes it (its float and double
// rounding points included). bidirectional (an encoder): half the buckets for keys after the query.
int32_t relative_position_bucket(int64_t offset, int n_buckets, bool bidirectional);

// The bias of every offset in (-n, n) for each of n_head heads: out[(offset + n - 1) * n_head + h]
// = rel_b[bucket(offset) * n_head + h], rel_b being the file's attn_rel_b ({n_head, n_buckets}).
void relative_bias_table(const float* rel_b, int n_head, int n_buckets, bool bidirectional, int64_t n, float* out);

}  // namespace ox
