// llama-perplexity's default mode over a Session: chunking, BOS per chunk, the second half of each
// chunk scored with a double-precision log-softmax, running and final estimates.
#include "core/tools/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "core/base/memory.h"

namespace ox {

double NllStats::ppl() const { return count > 0 ? std::exp(nll / static_cast<double>(count)) : 0.0; }

double NllStats::ppl_error() const {
  if (count < 2) return -1.0;
  const double mean = nll / static_cast<double>(count);
  const double var = nll2 / static_cast<double>(count) - mean * mean;
  if (!(var > 0)) return -1.0;
  return std::sqrt(var / static_cast<double>(count - 1)) * ppl();
}

double token_nll(std::span<const float> logits, int32_t token) {
  float max_logit = logits[0];
  for (float v : logits) max_logit = std::max(max_logit, v);
  double sum_exp = 0.0;
  for (float v : logits) sum_exp += std::exp(v - max_logit);  // float exp, double sum, as llama.cpp
  return std::log(sum_exp) - static_cast<double>(logits[static_cast<size_t>(token)] - max_logit);
}

void copy_chunk(std::span<const int32_t> tokens, int c, const tok::Tokenizer& tokenizer, std::span<int32_t> chunk) {
  const auto start = tokens.begin() + static_cast<std::ptrdiff_t>(c) * static_cast<std::ptrdiff_t>(chunk.size());
  std::copy(start, start + static_cast<std::ptrdiff_t>(chunk.size()), chunk.begin());
  if (tokenizer.add_bos() && tokenizer.bos_id() >= 0) chunk[0] = tokenizer.bos_id();
}

namespace {

Status check_options(const Session& session, const PerplexityOptions& options) {
  if (options.n_ctx < 3 || options.n_ctx > session.n_ctx()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("perplexity context %d is out of range: it must be at least 3 (a chunk scores its "
                        "second half) and at most the session's context, %d",
                        options.n_ctx, session.n_ctx()));
  }
  if (options.n_chunks == 0 || options.n_chunks < -1) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("chunk count %d is invalid: give a positive count, or -1 for every chunk", options.n_chunks));
  }
  if (session.model().tokenizer().add_eos()) {
    return error(ErrorCode::kUnsupported,
                 "this model's vocabulary appends EOS to every text; perplexity (as llama-perplexity) needs one "
                 "that does not");
  }
  return Status::ok();
}

}  // namespace

Result<PerplexityResult> perplexity(Session& session, std::string_view text, const PerplexityOptions& options,
                                    FunctionRef<bool(const PerplexityProgress&)> on_chunk) {
  OX_TRY(check_options(session, options));
  const int n_ctx = options.n_ctx;
  const tok::Tokenizer& tokenizer = session.model().tokenizer();
  // As llama-perplexity: BOS added as the vocabulary says, special-token texts read as text.
  OX_ASSIGN_OR_RETURN(std::vector<int32_t> tokens, session.tokenize(text, /*add_special=*/true,
                                                                    /*parse_special=*/false));
  if (tokens.size() < 2 * static_cast<size_t>(n_ctx)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("the text tokenizes to only %zu tokens; perplexity with a context of %d (-c) needs at "
                        "least %d (two chunks): give a longer text or a smaller -c",
                        tokens.size(), n_ctx, 2 * n_ctx));
  }
  PerplexityResult result;
  result.n_tokens = static_cast<int>(std::min<size_t>(tokens.size(), INT32_MAX));
  result.n_ctx = n_ctx;
  const int n_chunk_max = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
  result.n_chunks = options.n_chunks < 0 ? n_chunk_max : std::min(options.n_chunks, n_chunk_max);

  // Only positions [first, n_ctx - 1) are scored, each predicting the token after it: the model
  // always has at least half a chunk of context.
  const int first = n_ctx / 2;
  const int n_scored = n_ctx - 1 - first;
  const size_t n_vocab = static_cast<size_t>(session.model().hparams().n_vocab);
  const size_t n_logits = static_cast<size_t>(n_ctx - first) * n_vocab;
  OX_TRY(check_memory(n_logits * sizeof(float), strfmt("the logits of %d positions x %zu tokens", n_ctx - first, n_vocab),
                      "use a smaller -c"));
  std::vector<float> logits(n_logits);  // [n_ctx - first][n_vocab]
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));

  for (int c = 0; c < result.n_chunks; ++c) {
    copy_chunk(tokens, c, tokenizer, chunk);
    const auto t0 = std::chrono::steady_clock::now();
    OX_TRY(session.truncate(0));
    const std::span<const int32_t> all(chunk);
    OX_TRY(session.eval(all.first(static_cast<size_t>(first))));
    OX_TRY(session.eval(all.subspan(static_cast<size_t>(first)), logits.data()));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int r = 0; r < n_scored; ++r) {
      const std::span<const float> row(logits.data() + static_cast<size_t>(r) * n_vocab, n_vocab);
      result.stats.add(token_nll(row, chunk[static_cast<size_t>(first + r + 1)]));
    }
    result.chunk_ppl.push_back(result.stats.ppl());
    const PerplexityProgress progress{c + 1, result.n_chunks, result.stats.ppl(), seconds};
    if (!on_chunk(progress)) {
      return error(ErrorCode::kAborted, strfmt("perplexity stopped after chunk %d of %d", c + 1, result.n_chunks));
    }
  }
  return result;
}

}  // namespace ox
