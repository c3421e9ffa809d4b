// `oxidize perplexity`: llama-perplexity's default mode (core/tools/perplexity.h does the work).
// stdout carries the running "[1]x,[2]y," line and the final estimate; stderr the setup and timing.
#include <cstdint>
#include <cstdio>

#include "core/tools/perplexity.h"
#include "kernels/kernels.h"
#include "native/commands.h"

namespace ox::cli {

Status cmd_perplexity(Args& args) {
  if (!args.has({"-f", "--file"})) {
    return error(ErrorCode::kInvalidArgument, "no text given: pass -f FILE with the text to score");
  }
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-f", "--file"}, ""));
  OX_ASSIGN_OR_RETURN(int64_t n_chunks, args.integer({"--chunks"}, -1, -1, INT32_MAX));
  OX_ASSIGN_OR_RETURN(std::string text, read_text_file(path));  // before loading the model
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args, {.default_n_ctx = 512, .ctx_within_training = true}));
  OX_TRY(args.finish());
  Session& session = *ls.session;
  PerplexityOptions options;
  options.n_ctx = session.n_ctx();
  options.n_chunks = static_cast<int>(n_chunks);
  std::fprintf(stderr, "perplexity: n_ctx=%d, batch_size=%d, threads %d, kernels %s\n", options.n_ctx,
               session.n_batch(), session.n_threads(), kernels::best_kernels().isa);

  double total_seconds = 0;
  auto on_chunk = [&](const PerplexityProgress& p) {
    if (p.chunk == 1) {
      std::fprintf(stderr, "perplexity: %d chunks, %.2f seconds per pass\n", p.n_chunks, p.seconds);
    }
    total_seconds += p.seconds;
    std::printf("[%d]%.4f,", p.chunk, p.ppl);
    std::fflush(stdout);
    return true;
  };
  OX_ASSIGN_OR_RETURN(PerplexityResult r, perplexity(session, text, options, on_chunk));
  const double ppl = r.stats.ppl();
  const double err = r.stats.ppl_error();
  if (err >= 0) {
    std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, err);
  } else {
    std::printf("\nFinal estimate: PPL = %.4f (no standard error from %lld scored tokens)\n", ppl,
                static_cast<long long>(r.stats.count));
  }
  std::fflush(stdout);
  std::fprintf(stderr, "perplexity: %d of %d tokens in %d chunks, %lld scored, %.2f s (%.1f t/s)\n",
               r.n_chunks * r.n_ctx, r.n_tokens, r.n_chunks, static_cast<long long>(r.stats.count), total_seconds,
               total_seconds > 0 ? r.n_chunks * r.n_ctx / total_seconds : 0.0);
  return Status::ok();
}

}  // namespace ox::cli
