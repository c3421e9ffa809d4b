// Perplexity of a model over a text, computed as llama.cpp's llama-perplexity does in its default
// mode: the text (BOS added) is cut into chunks of n_ctx tokens, each evaluated from an empty
// context with its first token replaced by BOS, and only the second half of each chunk is scored.
// Used by `oxidize perplexity`; the browser package can call it on a Session the same way.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/session/session.h"

namespace ox {

struct PerplexityOptions {
  int n_ctx = 512;     // tokens per chunk (at most the session's context)
  int n_chunks = -1;   // -1: every whole chunk the text holds; otherwise at most this many (> 0)
};

// Sums of the negative log-likelihoods of the scored tokens, and what llama-perplexity reports.
struct NllStats {
  int64_t count = 0;  // tokens scored
  double nll = 0;     // sum of -log p(token)
  double nll2 = 0;    // sum of its squares

  void add(double v) { ++count; nll += v; nll2 += v * v; }
  double ppl() const;  // exp(mean NLL)
  // Standard error of ppl: ppl * sqrt(var(NLL) / (count - 1)), var the population variance as
  // llama-perplexity computes it; negative when it is undefined (count < 2 or var <= 0).
  double ppl_error() const;
};

struct PerplexityProgress {
  int chunk = 0;      // 1-based chunk just scored
  int n_chunks = 0;
  double ppl = 0;     // running estimate over chunks 1..chunk
  double seconds = 0; // wall time of this chunk's forward passes
};

struct PerplexityResult {
  int n_tokens = 0;   // tokens of the whole text, BOS included
  int n_ctx = 0;
  int n_chunks = 0;   // chunks evaluated
  std::vector<double> chunk_ppl;  // the running estimate after each chunk ("[1]x,[2]y,...")
  NllStats stats;
};

// -log softmax(logits)[token], accumulated in double as llama-perplexity does.
double token_nll(std::span<const float> logits, int32_t token);

// Chunk c (chunk.size() tokens) of `tokens` copied into `chunk`, its first token replaced by BOS
// where the vocabulary adds one: how llama-perplexity and llama-imatrix start every chunk.
void copy_chunk(std::span<const int32_t> tokens, int c, const tok::Tokenizer& tokenizer, std::span<int32_t> chunk);

// Tokenizes `text` (BOS as the vocabulary wants, special-token texts kept as text) and scores it
// on `session`, whose context is cleared first and holds the last chunk afterwards. Errors: n_ctx
// out of range (below 3, where a chunk scores no token, or above the session's context), n_chunks 0
// or below -1, a vocabulary that appends EOS (llama-perplexity refuses it too), a text of fewer
// than 2 * n_ctx tokens. on_chunk may return false to stop (kAborted).
Result<PerplexityResult> perplexity(Session& session, std::string_view text, const PerplexityOptions& options,
                                    FunctionRef<bool(const PerplexityProgress&)> on_chunk);

}  // namespace ox
