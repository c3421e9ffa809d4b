// `oxidize imatrix`: llama-imatrix's collection (core/tools/imatrix.h does the work). stdout carries
// the running "[1]x,[2]y," perplexity line and the final estimate; stderr the setup and what was saved.
#include <cstdint>
#include <cstdio>

#include "core/tools/imatrix.h"
#include "kernels/kernels.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

Result<ImatrixFormat> output_format(Args& args, const std::string& out_path) {
  OX_ASSIGN_OR_RETURN(std::string format, args.string({"--output-format"}, ""));
  if (format == "dat") return ImatrixFormat::kDat;
  if (format != "gguf" && !format.empty()) {
    return error(ErrorCode::kInvalidArgument, strfmt("--output-format: '%s' is not gguf or dat", format.c_str()));
  }
  if (format.empty() && (out_path.size() < 5 || out_path.substr(out_path.size() - 5) != ".gguf")) {
    std::fprintf(stderr, "imatrix: warning: saving in the GGUF format to %s, whose name does not end in .gguf "
                         "(--output-format dat writes the previous format)\n", out_path.c_str());
  }
  return ImatrixFormat::kGguf;
}

}  // namespace

Status cmd_imatrix(Args& args) {
  if (!args.has({"-f", "--file"})) {
    return error(ErrorCode::kInvalidArgument, "no text given: pass -f FILE with the text to collect over");
  }
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-f", "--file"}, ""));
  OX_ASSIGN_OR_RETURN(std::string out_path, args.string({"-o", "--output", "--output-file"}, "imatrix.gguf"));
  OX_ASSIGN_OR_RETURN(const ImatrixFormat format, output_format(args, out_path));
  ImatrixOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_chunks, args.integer({"--chunks"}, -1, -1, INT32_MAX));
  OX_ASSIGN_OR_RETURN(int64_t from_chunk, args.integer({"--chunk", "--from-chunk"}, 0, 0, INT32_MAX));
  OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, 512, 0, 1 << 24));
  if (n_ctx == 0) return error(ErrorCode::kInvalidArgument, "imatrix needs -c N > 0 (the chunk size)");
  options.n_chunks = static_cast<int>(n_chunks);
  options.from_chunk = static_cast<int>(from_chunk);
  options.process_output = args.flag({"--process-output"});
  options.compute_ppl = !args.flag({"--no-ppl"}) || args.flag({"--ppl"});
  options.parse_special = args.flag({"--parse-special"});
  options.dataset = path;
  OX_ASSIGN_OR_RETURN(std::string text, read_text_file(path));  // before loading the model
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args, {.default_n_ctx = 512}));
  OX_TRY(args.finish());
  Session& session = *ls.session;
  options.n_ctx = session.n_ctx();
  if (options.n_ctx > session.model().hparams().n_ctx_train) {
    std::fprintf(stderr, "imatrix: warning: the model was trained on only %d context tokens (-c %d)\n",
                 session.model().hparams().n_ctx_train, options.n_ctx);
  }
  std::fprintf(stderr, "imatrix: n_ctx=%d, batch_size=%d, threads %d, kernels %s\n", options.n_ctx, session.n_batch(),
               session.n_threads(), kernels::best_kernels().isa);

  double total_seconds = 0;
  auto on_chunk = [&](const ImatrixProgress& p) {
    if (p.chunk == 1) std::fprintf(stderr, "imatrix: %d chunks, %.2f seconds per pass\n", p.n_chunks, p.seconds);
    total_seconds += p.seconds;
    if (options.compute_ppl) {
      std::printf("[%d]%.4f,", p.chunk, p.ppl);
      std::fflush(stdout);
    }
    return true;
  };
  OX_ASSIGN_OR_RETURN(ImatrixResult r, compute_imatrix(session, text, options, on_chunk));
  if (options.compute_ppl && r.stats.count > 0) {
    const double err = r.stats.ppl_error();
    if (err >= 0) {
      std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.stats.ppl(), err);
    } else {
      std::printf("\nFinal estimate: PPL = %.4f\n", r.stats.ppl());
    }
  }
  OX_TRY(write_imatrix(r.imatrix, out_path, format));
  std::fprintf(stderr, "imatrix: %d chunks of %d tokens in %.2f s; saved %zu entries to %s (%s)\n", r.n_chunks,
               options.n_ctx, total_seconds, r.imatrix.entries.size(), out_path.c_str(),
               format == ImatrixFormat::kGguf ? "gguf" : "dat");
  return Status::ok();
}

}  // namespace ox::cli
