// `oxidize quantize` and `oxidize synth`: model-file producers.
#include <charconv>
#include <cstdio>
#include <optional>

#include "core/tools/quantize.h"
#include "core/tools/synth.h"
#include "native/commands.h"

namespace ox::cli {

namespace {

// --output-tensor-type / --token-embedding-type: a GGUF type name (q8_0, Q6_K, f16, ...).
Result<std::optional<DType>> type_option(Args& args, std::string_view flag) {
  if (!args.has({flag})) return std::optional<DType>();
  OX_ASSIGN_OR_RETURN(std::string name, args.string({flag}, ""));
  DType t;
  if (!dtype_from_name(name, &t)) {
    return error(ErrorCode::kInvalidArgument, strfmt("%.*s: '%s' is not a GGUF type name (q8_0, q6_k, f16, ...)",
                                                     static_cast<int>(flag.size()), flag.data(), name.c_str()));
  }
  return std::optional<DType>(t);
}

// llama.cpp's shape column: four dims, %6 wide.
std::string shape_text(std::span<const uint64_t> dims) {
  std::string s = "[";
  for (size_t d = 0; d < 4; ++d) {
    s += strfmt(d == 0 ? "%6llu" : ", %6llu", static_cast<unsigned long long>(d < dims.size() ? dims[d] : 1));
  }
  return s + "]";
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Status cmd_quantize(Args& args) {
  QuantizeOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, 0, 0, 256));
  OX_ASSIGN_OR_RETURN(options.imatrix_path, args.string({"--imatrix"}, ""));
  OX_ASSIGN_OR_RETURN(options.include_weights, args.strings({"--include-weights"}));
  OX_ASSIGN_OR_RETURN(options.exclude_weights, args.strings({"--exclude-weights"}));
  options.allow_requantize = args.flag({"--allow-requantize"});
  options.types.pure = args.flag({"--pure"});
  options.types.quantize_output = !args.flag({"--leave-output-tensor"});
  OX_ASSIGN_OR_RETURN(options.types.output_type, type_option(args, "--output-tensor-type"));
  OX_ASSIGN_OR_RETURN(options.types.token_embd_type, type_option(args, "--token-embedding-type"));
  std::vector<std::string> rest = args.positionals();
  OX_TRY(args.finish());
  if (rest.size() != 3 && rest.size() != 4) {
    return error(ErrorCode::kInvalidArgument, "usage: oxidize quantize [options] IN.gguf OUT.gguf TYPE [THREADS]");
  }
  if (find_quant_preset(rest[2]) == nullptr) {
    std::string names;
    for (const QuantPreset& p : quant_presets()) {
      if (!names.empty()) names += ' ';
      names += p.name;
    }
    return error(ErrorCode::kInvalidArgument, strfmt("unknown type '%s' (one of: %s)", rest[2].c_str(), names.c_str()));
  }
  if (rest.size() == 4) {  // llama-quantize's positional thread count
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(rest[3].data(), rest[3].data() + rest[3].size(), v);
    if (ec != std::errc() || end != rest[3].data() + rest[3].size() || v < 0 || v > 256) {
      return error(ErrorCode::kInvalidArgument, strfmt("thread count '%s' is not a number in 0..256", rest[3].c_str()));
    }
    n_threads = v;
  }
  options.n_threads = static_cast<int>(n_threads);
  std::fprintf(stderr, "quantize: %s -> %s as %s\n", rest[0].c_str(), rest[1].c_str(), rest[2].c_str());
  auto on_tensor = [](const QuantizeTensorEvent& e) {
    const std::string head = strfmt("[%4zu/%4zu] %-36.*s - %s, type = %6s, ", e.index + 1, e.count,
                                    static_cast<int>(e.name.size()), e.name.data(), shape_text(e.dims).c_str(),
                                    dtype_name(e.from));
    if (e.from == e.to) {
      std::fprintf(stderr, "%ssize = %8.3f MiB\n", head.c_str(), e.bytes_in / kMiB);
    } else {
      std::fprintf(stderr, "%sconverting to %s%s .. size = %8.2f MiB -> %8.2f MiB\n", head.c_str(), dtype_name(e.to),
                   e.importance ? " (imatrix)" : "", e.bytes_in / kMiB, e.bytes_out / kMiB);
    }
  };
  OX_ASSIGN_OR_RETURN(const QuantizeStats stats, quantize_gguf(rest[0], rest[1], rest[2], options, on_tensor));
  const double n = stats.n_elements > 0 ? static_cast<double>(stats.n_elements) : 1.0;
  if (!options.imatrix_path.empty()) {
    std::fprintf(stderr, "quantize: used %zu importance matrix entries from %s\n", stats.n_imatrix_entries,
                 options.imatrix_path.c_str());
  }
  std::fprintf(stderr, "quantize: model size  = %8.2f MiB (%.2f BPW)\n", stats.bytes_in / kMiB, stats.bytes_in * 8.0 / n);
  std::fprintf(stderr, "quantize: quant size  = %8.2f MiB (%.2f BPW)\n", stats.bytes_out / kMiB, stats.bytes_out * 8.0 / n);
  return Status::ok();
}

Status cmd_synth(Args& args) {
  SynthOptions options;
  OX_ASSIGN_OR_RETURN(options.arch, args.string({"--arch"}, ""));
  if (!options.arch.empty()) options.shape = "tiny-arch";
  OX_ASSIGN_OR_RETURN(options.shape, args.string({"--shape"}, options.shape));
  OX_ASSIGN_OR_RETURN(options.type, args.string({"--type"}, options.type));
  OX_ASSIGN_OR_RETURN(options.out_path, args.string({"-o", "--output"}, ""));
  OX_ASSIGN_OR_RETURN(options.vocab_path, args.string({"--vocab"}, ""));
  OX_ASSIGN_OR_RETURN(options.variant, args.string({"--variant"}, ""));
  OX_ASSIGN_OR_RETURN(int64_t seed, args.integer({"-s", "--seed"}, 1, 0, INT64_MAX));
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, 0, 0, 256));
  OX_ASSIGN_OR_RETURN(int64_t n_layer, args.integer({"--layers"}, 0, 0, 1024));
  OX_ASSIGN_OR_RETURN(int64_t vocab_size, args.integer({"--vocab-size"}, 0, 0, UINT32_MAX));
  OX_ASSIGN_OR_RETURN(double weight_std, args.number({"--weight-std"}, options.weight_std));
  OX_TRY(args.finish());
  if (options.out_path.empty()) return error(ErrorCode::kInvalidArgument, "synth: -o OUT.gguf is required");
  if (!(weight_std > 0.0 && weight_std <= 10.0)) {
    return error(ErrorCode::kInvalidArgument, strfmt("--weight-std: %g is not in (0, 10]", weight_std));
  }
  options.seed = static_cast<uint64_t>(seed);
  options.n_threads = static_cast<int>(n_threads);
  options.n_layer = static_cast<uint32_t>(n_layer);
  options.vocab_size = static_cast<uint32_t>(vocab_size);
  options.weight_std = static_cast<float>(weight_std);
  return synth_gguf(options);
}

}  // namespace ox::cli
