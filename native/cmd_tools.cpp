// `oxidize quantize`, `oxidize synth` and `oxidize gguf-split`: model-file producers.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "core/gguf/gguf.h"
#include "core/gguf/split.h"
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

// A preset by name (any case) or by llama.cpp's ftype number, as llama-quantize's try_parse_ftype
// (0 is F32: COPY, the same number, comes later).
const QuantPreset* preset_of(std::string_view text) {
  if (const QuantPreset* p = find_quant_preset(text)) return p;
  uint32_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return nullptr;
  for (const QuantPreset& p : quant_presets()) {
    if (p.llama_ftype == n) return &p;
  }
  return nullptr;
}

// --tensor-type values, then --tensor-type-file's entries (whitespace-separated), in order.
Result<std::vector<TensorTypeOverride>> tensor_type_options(Args& args) {
  OX_ASSIGN_OR_RETURN(std::vector<std::string> texts, args.strings({"--tensor-type"}));
  OX_ASSIGN_OR_RETURN(std::string file, args.string({"--tensor-type-file"}, ""));
  if (!file.empty()) {
    OX_ASSIGN_OR_RETURN(std::string body, read_text_file(file));
    size_t i = 0;
    while (i < body.size()) {
      while (i < body.size() && std::isspace(static_cast<unsigned char>(body[i]))) ++i;
      size_t j = i;
      while (j < body.size() && !std::isspace(static_cast<unsigned char>(body[j]))) ++j;
      if (j > i) texts.push_back(body.substr(i, j - i));
      i = j;
    }
  }
  std::vector<TensorTypeOverride> out;
  for (const std::string& t : texts) {
    OX_ASSIGN_OR_RETURN(TensorTypeOverride v, parse_tensor_type_override(t));
    out.push_back(std::move(v));
  }
  return out;
}

// --prune-layers L0,L1,...: layer ids, sorted, each once (llama-quantize's parse_layer_prune).
Result<std::vector<uint32_t>> prune_option(Args& args) {
  std::vector<uint32_t> out;
  if (!args.has({"--prune-layers"})) return out;
  OX_ASSIGN_OR_RETURN(std::string text, args.string({"--prune-layers"}, ""));
  size_t at = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', at), text.size());
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + at, text.data() + comma, v);
    if (comma == at || ec != std::errc() || end != text.data() + comma) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--prune-layers '%s': '%s' is not a layer number", text.c_str(),
                          text.substr(at, comma - at).c_str()));
    }
    out.push_back(v);
    if (comma == text.size()) break;
    at = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string preset_names() {
  std::string names;
  for (const QuantPreset& p : quant_presets()) {
    if (!names.empty()) names += ' ';
    names += p.name;
  }
  return names;
}

}  // namespace

Status cmd_quantize(Args& args) {
  QuantizeOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, 0, 0, 256));
  // llama-quantize's int MiB, of which it refuses <= 0 (it reads "12x" as 12; that is refused here).
  OX_ASSIGN_OR_RETURN(int64_t max_buffer_mib, args.integer({"--max-buffer-size"}, 0, 1, INT32_MAX));
  options.max_buffer_bytes = static_cast<uint64_t>(max_buffer_mib) << 20;
  OX_ASSIGN_OR_RETURN(options.imatrix_path, args.string({"--imatrix"}, ""));
  OX_ASSIGN_OR_RETURN(options.include_weights, args.strings({"--include-weights"}));
  OX_ASSIGN_OR_RETURN(options.exclude_weights, args.strings({"--exclude-weights"}));
  options.allow_requantize = args.flag({"--allow-requantize"});
  options.types.pure = args.flag({"--pure"});
  options.types.quantize_output = !args.flag({"--leave-output-tensor"});
  options.dry_run = args.flag({"--dry-run"});
  options.keep_split = args.flag({"--keep-split"});
  OX_ASSIGN_OR_RETURN(options.types.output_type, type_option(args, "--output-tensor-type"));
  OX_ASSIGN_OR_RETURN(options.types.token_embd_type, type_option(args, "--token-embedding-type"));
  OX_ASSIGN_OR_RETURN(options.types.tensor_types, tensor_type_options(args));
  OX_ASSIGN_OR_RETURN(options.prune_layers, prune_option(args));
  OX_ASSIGN_OR_RETURN(std::vector<std::string> kv_texts, args.strings({"--override-kv"}));
  for (const std::string& t : kv_texts) {
    OX_ASSIGN_OR_RETURN(gguf::KvOverride kv, gguf::parse_kv_override(t, "--override-kv"));
    options.override_kv.push_back(std::move(kv));
  }
  std::vector<std::string> rest = args.positionals();
  OX_TRY(args.finish());
  // llama-quantize's two shapes: IN TYPE [THREADS] (when the second word is a type) and
  // IN OUT TYPE [THREADS].
  const bool type_second = rest.size() >= 2 && preset_of(rest[1]) != nullptr;
  const size_t type_at = type_second ? 1 : 2;
  if (rest.size() < type_at + 1 || rest.size() > type_at + 2) {
    return error(ErrorCode::kInvalidArgument, "usage: oxidize quantize [options] IN.gguf [OUT.gguf] TYPE [THREADS]");
  }
  const QuantPreset* preset = preset_of(rest[type_at]);
  if (preset == nullptr) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("unknown type '%s' (one of: %s, or llama.cpp's ftype number)", rest[type_at].c_str(),
                        preset_names().c_str()));
  }
  std::string out_path = type_second ? std::string() : rest[1];
  if (type_second && !options.dry_run) {  // llama-quantize's default name, beside the input
    const size_t slash = rest[0].find_last_of('/');
    out_path = (slash == std::string::npos ? std::string() : rest[0].substr(0, slash + 1)) + "ggml-model-" +
               preset->name + ".gguf";
  }
  if (rest.size() == type_at + 2) {  // llama-quantize's positional thread count
    const std::string& text = rest[type_at + 1];
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > 256) {
      return error(ErrorCode::kInvalidArgument, strfmt("thread count '%s' is not a number in 0..256", text.c_str()));
    }
    n_threads = v;
  }
  options.n_threads = static_cast<int>(n_threads);
  if (options.dry_run) {
    std::fprintf(stderr, "quantize: calculating the quantization size of %s as %s\n", rest[0].c_str(), preset->name);
  } else {
    const std::string shown =
        options.keep_split ? gguf::split_output_prefix(out_path) + "-NNNNN-of-NNNNN.gguf" : out_path;
    std::fprintf(stderr, "quantize: %s -> %s as %s\n", rest[0].c_str(), shown.c_str(), preset->name);
  }
  auto on_tensor = [&](const QuantizeTensorEvent& e) {
    const std::string head = strfmt("[%4zu/%4zu] %-36.*s - %s, type = %6s, ", e.index + 1, e.count,
                                    static_cast<int>(e.name.size()), e.name.data(), shape_text(e.dims).c_str(),
                                    dtype_name(e.from));
    if (e.from == e.to) {
      std::fprintf(stderr, "%ssize = %8.3f MiB\n", head.c_str(), e.bytes_in / kMiB);
    } else if (options.dry_run) {  // llama-quantize --dry-run's line
      std::fprintf(stderr, "%ssize = %8.2f MiB -> %8.2f MiB (%s)\n", head.c_str(), e.bytes_in / kMiB,
                   e.bytes_out / kMiB, dtype_name(e.to));
    } else {
      std::fprintf(stderr, "%sconverting to %s%s .. size = %8.2f MiB -> %8.2f MiB\n", head.c_str(), dtype_name(e.to),
                   e.importance ? " (imatrix)" : "", e.bytes_in / kMiB, e.bytes_out / kMiB);
    }
  };
  OX_ASSIGN_OR_RETURN(const QuantizeStats stats, quantize_gguf(rest[0], out_path, preset->name, options, on_tensor));
  const double n = stats.n_elements > 0 ? static_cast<double>(stats.n_elements) : 1.0;
  if (!options.imatrix_path.empty()) {
    std::fprintf(stderr, "quantize: used %zu importance matrix entries from %s\n", stats.n_imatrix_entries,
                 options.imatrix_path.c_str());
  }
  std::fprintf(stderr, "quantize: model size  = %8.2f MiB (%.2f BPW)\n", stats.bytes_in / kMiB, stats.bytes_in * 8.0 / n);
  std::fprintf(stderr, "quantize: quant size  = %8.2f MiB (%.2f BPW)\n", stats.bytes_out / kMiB, stats.bytes_out * 8.0 / n);
  if (options.keep_split) {
    for (const std::string& path : stats.out_paths) std::fprintf(stderr, "quantize: wrote %s\n", path.c_str());
  }
  if (!stats.needs_imatrix.empty()) {
    std::fprintf(stderr, "quantize: warning: the dry run completed, but the quantization itself needs an importance "
                         "matrix (--imatrix FILE): tensor '%s' is one that needs it\n", stats.needs_imatrix.c_str());
  }
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

Status cmd_gguf_split(Args& args) {
  OX_ASSIGN_OR_RETURN(int64_t max_tensors, args.integer({"--split-max-tensors"}, 128, 1, 1 << 30));
  args.flag({"--split"});  // llama-gguf-split's default operation, accepted by its name
  std::vector<std::string> rest = args.positionals();
  OX_TRY(args.finish());
  if (rest.size() != 2) {
    return error(ErrorCode::kInvalidArgument, "usage: oxidize gguf-split [--split-max-tensors N] IN.gguf OUT_PREFIX");
  }
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> in, gguf::GgufFile::open(rest[0]));
  OX_ASSIGN_OR_RETURN(std::vector<std::string> paths,
                      gguf::write_split(*in, rest[1], static_cast<uint32_t>(max_tensors)));
  for (const std::string& path : paths) std::fprintf(stderr, "gguf-split: wrote %s\n", path.c_str());
  return Status::ok();
}

}  // namespace ox::cli
