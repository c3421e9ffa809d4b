// `oxidize tokenize --bench R`: tokenization throughput of one vocabulary on one text, as one JSON
// line (bench/peers/tokenize.mjs compares it with llama.cpp). The same text flags as `tokenize`.
#include <cstdio>

#include "core/tools/tokenize_bench.h"
#include "native/commands.h"

namespace ox::cli {

Status cmd_tokenize_bench(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  OX_ASSIGN_OR_RETURN(int64_t reps, args.integer({"--bench"}, 5, 1, 100000));
  TokenizeBenchOptions options;
  options.repetitions = static_cast<int>(reps);
  options.add_special = !args.flag({"--no-bos"});
  options.parse_special = !args.flag({"--no-parse-special"});
  options.warmup = !args.flag({"--no-warmup"});
  OX_ASSIGN_OR_RETURN(std::string text, prompt_text(args));
  OX_TRY(args.finish());
  if (path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<tok::Tokenizer> tokenizer, tok::Tokenizer::from_gguf(*file));
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  OX_ASSIGN_OR_RETURN(TokenizeBenchResult result, run_tokenize_bench(*tokenizer, name, text, options));
  const std::string json = tokenize_bench_json(result) + "\n";
  std::fwrite(json.data(), 1, json.size(), stdout);
  return Status::ok();
}

}  // namespace ox::cli
