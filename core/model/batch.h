// A batch of tokens from several sequences for one forward pass (what a server's continuous
// batching submits): every token names its sequence and position. The matmuls run over the whole
// batch; RoPE, K/V stores and attention go per run of consecutive tokens of one sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ox {

struct BatchToken {
  int32_t token = 0;
  int32_t seq = 0;      // sequence id, < the cache's n_seq
  int64_t pos = 0;      // position in that sequence
  bool logits = false;  // wants a row of logits
};

// Tokens [t0, t0 + n) of a batch: one sequence at positions pos0 .. pos0 + n - 1.
struct SeqRun {
  int32_t seq = 0;
  int64_t pos0 = 0;
  int64_t t0 = 0;
  int64_t n = 0;
};

// Splits a batch into maximal runs (a token starts a new run unless it continues the previous
// token's sequence at the next position), written to runs (room for batch.size()); returns how many.
size_t split_runs(std::span<const BatchToken> batch, std::span<SeqRun> runs);

}  // namespace ox
