// Importance matrices computed as llama-imatrix computes them: the text is cut into chunks of n_ctx
// tokens (BOS first, as llama-perplexity), each evaluated from an empty context, and for every
// weight matrix of the blocks the squares of the activations entering each column are summed over
// the tokens, with the token count (per expert for 3-D expert tensors). The perplexity of each
// chunk's second half comes along, as llama-imatrix prints it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/session/session.h"
#include "core/tools/imatrix_file.h"
#include "core/tools/perplexity.h"

namespace ox {

struct ImatrixOptions {
  int n_ctx = 512;              // tokens per chunk (-c; at most the session's context)
  int n_chunks = -1;            // -1: every whole chunk; otherwise at most this many (> 0)
  int from_chunk = 0;           // chunks skipped at the start of the text (--chunk)
  bool process_output = false;  // collect output.weight too (--process-output)
  bool compute_ppl = true;      // score each chunk's second half (--no-ppl turns it off)
  bool parse_special = false;   // special-token texts in the text become control tokens
  std::string dataset;          // recorded in imatrix.datasets (the text file's path)
};

struct ImatrixProgress {
  int chunk = 0;       // 1-based chunk just evaluated
  int n_chunks = 0;
  double ppl = 0;      // running perplexity (0 without compute_ppl)
  double seconds = 0;  // wall time of this chunk's forward passes
};

struct ImatrixResult {
  Imatrix imatrix;
  int n_tokens = 0;  // of the text, BOS included, before --chunk's skip
  int n_chunks = 0;  // chunks evaluated
  NllStats stats;    // of the scored tokens (empty without compute_ppl)
};

// Collects over `text` on `session` (its context is cleared first; the observer is removed after).
// Errors: options out of range, a vocabulary that appends EOS, a text too short for two chunks
// after the skipped ones, a non-finite activation (naming the tensor). on_chunk may return false
// to stop (kAborted).
Result<ImatrixResult> compute_imatrix(Session& session, std::string_view text, const ImatrixOptions& options,
                                      FunctionRef<bool(const ImatrixProgress&)> on_chunk);

}  // namespace ox
