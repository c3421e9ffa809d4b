// `oxidize quantize` and `oxidize synth`: model-file producers.
#include "core/tools/quantize.h"
#include "core/tools/synth.h"
#include "native/commands.h"

namespace ox::cli {

Status cmd_quantize(Args& args) {
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, 0, 0, 256));
  std::vector<std::string> rest = args.positionals();
  OX_TRY(args.finish());
  if (rest.size() != 3) {
    return error(ErrorCode::kInvalidArgument, "usage: oxidize quantize IN.gguf OUT.gguf TYPE [-t THREADS]");
  }
  if (find_quant_preset(rest[2]) == nullptr) {
    std::string names;
    for (const QuantPreset& p : quant_presets()) names += (names.empty() ? "" : " ") + std::string(p.name);
    return error(ErrorCode::kInvalidArgument, strfmt("unknown type '%s' (one of: %s)", rest[2].c_str(), names.c_str()));
  }
  return quantize_gguf(rest[0], rest[1], rest[2], static_cast<int>(n_threads));
}

Status cmd_synth(Args& args) {
  SynthOptions options;
  OX_ASSIGN_OR_RETURN(options.shape, args.string({"--shape"}, options.shape));
  OX_ASSIGN_OR_RETURN(options.type, args.string({"--type"}, options.type));
  OX_ASSIGN_OR_RETURN(options.out_path, args.string({"-o", "--output"}, ""));
  OX_ASSIGN_OR_RETURN(options.vocab_path, args.string({"--vocab"}, ""));
  OX_ASSIGN_OR_RETURN(int64_t seed, args.integer({"-s", "--seed"}, 1, 0, INT64_MAX));
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, 0, 0, 256));
  OX_ASSIGN_OR_RETURN(int64_t n_layer, args.integer({"--layers"}, 0, 0, 1024));
  OX_ASSIGN_OR_RETURN(double weight_std, args.number({"--weight-std"}, options.weight_std));
  OX_TRY(args.finish());
  if (options.out_path.empty()) return error(ErrorCode::kInvalidArgument, "synth: -o OUT.gguf is required");
  if (!(weight_std > 0.0 && weight_std <= 10.0)) {
    return error(ErrorCode::kInvalidArgument, strfmt("--weight-std: %g is not in (0, 10]", weight_std));
  }
  options.seed = static_cast<uint64_t>(seed);
  options.n_threads = static_cast<int>(n_threads);
  options.n_layer = static_cast<uint32_t>(n_layer);
  options.weight_std = static_cast<float>(weight_std);
  return synth_gguf(options);
}

}  // namespace ox::cli
