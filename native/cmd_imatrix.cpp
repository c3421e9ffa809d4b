// `oxidize imatrix`: llama-imatrix's collection (core/tools/imatrix.h does the work). stdout carries
// the running "[1]x,[2]y," perplexity line and the final estimate; stderr the setup and what was saved.
#include <cmath>
#include <cstdint>
#include <string>
#include <cstdio>

#include "core/tools/imatrix.h"
#include "core/tools/imatrix_stats.h"
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

// --in-file: each file summed into one, as llama-imatrix loads them (chunks of n_ctx tokens).
Result<Imatrix> combined_inputs(const std::vector<std::string>& paths, uint32_t n_ctx) {
  Imatrix sum;
  for (const std::string& path : paths) {
    OX_ASSIGN_OR_RETURN(const Imatrix one, read_imatrix(path));
    OX_TRY(merge_imatrix(sum, one, n_ctx, path));
    std::fprintf(stderr, "imatrix: loaded %zu entries from %s\n", one.entries.size(), path.c_str());
  }
  return sum;
}

Status save(const Imatrix& m, const std::string& out_path, ImatrixFormat format) {
  OX_TRY(write_imatrix(m, out_path, format));
  std::fprintf(stderr, "imatrix: saved %zu entries (%u chunks of %u tokens) to %s (%s)\n", m.entries.size(),
               m.chunk_count, m.chunk_size, out_path.c_str(), format == ImatrixFormat::kGguf ? "gguf" : "dat");
  return Status::ok();
}

// llama-imatrix --show-statistics' two tables, in its format.
void print_statistics(const std::string& path, const Imatrix& m) {
  const std::vector<ImatrixTensorStats> tensors = imatrix_statistics(m);
  std::printf("\nComputing statistics for %s (%d tensors)\n", path.c_str(), static_cast<int>(tensors.size()));
  std::printf("\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", " Layer", "       Tensor",
              "          \u03a3(Act\u00b2)", "  Min", "            Max", "           \u03bc", "   \u03c3", " % Active",
              "N", "   Entropy", "E (norm)", "ZD", "  CosSim");
  std::printf("%s\n", std::string(169, '=').c_str());
  for (const ImatrixTensorStats& t : tensors) {
    const float entropy_norm = t.elements > 0 ? 100.0f * (t.entropy / std::log2(static_cast<float>(t.elements))) : 0.0f;
    std::printf("%5s\t%-20s\t%10.2f\t%8.4f\t%11.4f\t%6.2f\t%6.2f\t%8.2f%%\t%6d\t%10.4f\t%6.2f%%\t%10.2f%%\t%8.4f\n",
                t.layer.c_str(), t.tensor.c_str(), t.total, t.min, t.max, t.mean, t.stddev, t.active * 100.0f,
                t.elements, t.entropy, entropy_norm, 100.0f * t.zd, t.cossim);
  }
  const std::vector<ImatrixLayerStats> layers = imatrix_layer_statistics(tensors);
  std::printf("\nComputing weighted average statistics per layer (%d layers)\n", static_cast<int>(layers.size()));
  std::printf("\n%s\t%s\t%s\t%s\n", "  Layer", "     \u03bc\u03a3(Act\u00b2)", "      \u03bcZD", "\u03bcCosSim");
  std::printf("================================================\n");
  for (const ImatrixLayerStats& l : layers) {
    std::printf("%5d\t%14.2f\t%10.4f%%\t%6.4f\n", l.layer, l.total, 100.0f * l.zd, l.cossim);
  }
  std::printf("\n");
}

}  // namespace

Status cmd_imatrix(Args& args) {
  OX_ASSIGN_OR_RETURN(std::vector<std::string> in_files, args.strings({"--in-file"}));
  if (args.flag({"--show-statistics"})) {
    OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, 512, 1, 1 << 24));
    OX_TRY(args.finish());
    if (in_files.size() != 1) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--show-statistics takes exactly one --in-file (%zu given)", in_files.size()));
    }
    OX_ASSIGN_OR_RETURN(const Imatrix m, combined_inputs(in_files, static_cast<uint32_t>(n_ctx)));
    print_statistics(in_files[0], m);
    return Status::ok();
  }
  if (!args.has({"-f", "--file"}) && in_files.empty()) {
    return error(ErrorCode::kInvalidArgument, "no text given: pass -f FILE with the text to collect over (or "
                                              "--in-file FILES to combine)");
  }
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-f", "--file"}, ""));
  OX_ASSIGN_OR_RETURN(std::string out_path, args.string({"-o", "--output", "--output-file"}, "imatrix.gguf"));
  OX_ASSIGN_OR_RETURN(const ImatrixFormat format, output_format(args, out_path));
  ImatrixOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_chunks, args.integer({"--chunks"}, -1, -1, INT32_MAX));
  OX_ASSIGN_OR_RETURN(int64_t from_chunk, args.integer({"--chunk", "--from-chunk"}, 0, 0, INT32_MAX));
  OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, 512, 0, 1 << 24));
  if (n_ctx == 0) return error(ErrorCode::kInvalidArgument, "imatrix needs -c N > 0 (the chunk size)");
  if (path.empty()) {  // combining only (llama-imatrix without a prompt): no model is loaded
    OX_ASSIGN_OR_RETURN(std::string model, args.string({"-m", "--model"}, ""));
    OX_TRY(args.finish());
    OX_ASSIGN_OR_RETURN(const Imatrix sum, combined_inputs(in_files, static_cast<uint32_t>(n_ctx)));
    if (!model.empty()) std::fprintf(stderr, "imatrix: no -f text: combining only, %s is not loaded\n", model.c_str());
    return save(sum, out_path, format);
  }
  options.n_chunks = static_cast<int>(n_chunks);
  options.from_chunk = static_cast<int>(from_chunk);
  options.process_output = args.flag({"--process-output"});
  options.compute_ppl = !args.flag({"--no-ppl"}) || args.flag({"--ppl"});
  options.parse_special = args.flag({"--parse-special"});
  options.dataset = path;
  OX_ASSIGN_OR_RETURN(std::string text, read_text_file(path));  // before loading the model
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args, {.default_n_ctx = 512}));
  OX_TRY(args.finish());
  // The --in-file statistics first, as llama-imatrix's collector starts from them (read before the
  // text is evaluated, so a bad file fails early).
  OX_ASSIGN_OR_RETURN(Imatrix start, combined_inputs(in_files, static_cast<uint32_t>(ls.session->n_ctx())));
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
  std::fprintf(stderr, "imatrix: %d chunks of %d tokens in %.2f s\n", r.n_chunks, options.n_ctx, total_seconds);
  if (in_files.empty()) return save(r.imatrix, out_path, format);
  OX_TRY(merge_imatrix(start, r.imatrix, static_cast<uint32_t>(options.n_ctx), path));
  return save(start, out_path, format);
}

}  // namespace ox::cli
