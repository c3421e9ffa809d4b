// `oxidize bench`: llama-bench style throughput table (pp = prompt, tg = generation).
#include <charconv>
#include <cstdio>

#include "core/tools/bench.h"
#include "kernels/kernels.h"
#include "core/base/cpu_info.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

// "1,2,4" -> {1, 2, 4}; error names the flag.
Result<std::vector<int>> int_list(Args& args, std::initializer_list<std::string_view> names, std::vector<int> fallback,
                                  int max) {
  OX_ASSIGN_OR_RETURN(std::vector<std::string> values, args.strings(names));
  if (values.empty()) return fallback;
  std::vector<int> out;
  for (const std::string& v : values) {
    size_t start = 0;
    while (start <= v.size()) {
      const size_t comma = std::min(v.find(',', start), v.size());
      int x = 0;
      const auto [end, ec] = std::from_chars(v.data() + start, v.data() + comma, x);
      if (ec != std::errc() || end != v.data() + comma || x < 0 || x > max) {
        return error(ErrorCode::kInvalidArgument,
                     strfmt("%s: '%s' is not a comma-separated list of integers in [0, %d]", names.begin()->data(),
                            v.c_str(), max));
      }
      out.push_back(x);
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace

Status cmd_bench(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  if (path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::string isa, args.string({"--isa"}, ""));
  if (!isa.empty()) OX_TRY(kernels::set_isa_override(isa));
  BenchOptions options;
  OX_ASSIGN_OR_RETURN(options.n_prompt, int_list(args, {"-p", "--n-prompt"}, {512}, 1 << 20));
  OX_ASSIGN_OR_RETURN(options.n_gen, int_list(args, {"-n", "--n-gen"}, {128}, 1 << 20));
  OX_ASSIGN_OR_RETURN(options.n_threads, int_list(args, {"-t", "--threads"}, {default_thread_count()}, 256));
  OX_ASSIGN_OR_RETURN(options.n_depth, int_list(args, {"-d", "--n-depth"}, {0}, 1 << 20));
  OX_ASSIGN_OR_RETURN(int64_t reps, args.integer({"-r", "--repetitions"}, 5, 1, 1000));
  OX_ASSIGN_OR_RETURN(int64_t n_batch, args.integer({"-b", "--batch-size"}, 512, 1, 1 << 16));
  OX_ASSIGN_OR_RETURN(std::string output, args.string({"-o", "--output"}, "md"));
  options.warmup = !args.flag({"--no-warmup"});
  options.swa_full = args.flag({"--swa-full"});
  OX_TRY(cache_types(args, &options.cache_type_k, &options.cache_type_v));
  OX_TRY(args.finish());
  if (output != "md" && output != "json" && output != "jsonl") {
    return error(ErrorCode::kInvalidArgument, strfmt("-o: '%s' is not md, json or jsonl", output.c_str()));
  }
  for (int t : options.n_threads) {
    if (t < 1) return error(ErrorCode::kInvalidArgument, "-t: thread counts must be >= 1");
  }
  options.repetitions = static_cast<int>(reps);
  options.n_batch = static_cast<int>(n_batch);
  OX_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model, LoadedModel::open(path));
  OX_ASSIGN_OR_RETURN(std::vector<BenchResult> results, run_bench(model, options));
  const std::string text = output == "json"    ? bench_json(results) + "\n"
                           : output == "jsonl" ? bench_jsonl(results)
                                               : bench_markdown(results);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return Status::ok();
}

}  // namespace ox::cli
