// quantize_gguf: a model file in, its quantized copy out, as llama_model_quantize_impl does it: each
// tensor's type from quantize.cpp's rules, an importance matrix checked against the model and handed
// to the quantizer per tensor (per expert), every refusal made before the output is written.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "core/gguf/gguf.h"
#include "core/gguf/split.h"
#include "core/gguf/writer.h"
#include "core/model/tensor_names.h"
#include "core/tools/imatrix_file.h"
#include "core/tools/quantize.h"

namespace ox {

void convert_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows,
                  int64_t n_per_row, int n_threads, const float* importance, int64_t rows_per_importance,
                  QuantizeRowsHook quantize) {
  const QuantTraits& from = quant_traits(src_type);
  OX_CHECK(from.to_float != nullptr && quantize != nullptr);
  const uint64_t src_row = dtype_row_bytes(src_type, static_cast<uint64_t>(n_per_row));
  const uint64_t dst_row = dtype_row_bytes(dst_type, static_cast<uint64_t>(n_per_row));
  if (rows_per_importance <= 0) rows_per_importance = n_rows;
  // Rows [r0, r1) in runs of up to kRun rows that never cross from one importance vector to the next.
  auto work = [&](int64_t r0, int64_t r1) {
    constexpr int64_t kRun = 16;
    std::vector<float> rows(static_cast<size_t>(kRun * n_per_row));  // [kRun][n_per_row]
    for (int64_t r = r0; r < r1;) {
      const int64_t group = r / rows_per_importance;
      const int64_t n = std::min({kRun, r1 - r, (group + 1) * rows_per_importance - r});
      for (int64_t i = 0; i < n; ++i) {
        from.to_float(src + static_cast<uint64_t>(r + i) * src_row, rows.data() + i * n_per_row, n_per_row);
      }
      const float* imp = importance != nullptr ? importance + group * n_per_row : nullptr;
      quantize(dst_type, rows.data(), dst + static_cast<uint64_t>(r) * dst_row, n, n_per_row, imp);
      r += n;
    }
  };
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  n_threads = 1;  // the single-thread wasm build cannot start threads
#endif
  if (n_threads <= 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t n_workers = std::max<int64_t>(1, std::min<int64_t>(n_threads, n_rows));
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < n_workers; ++t) {
    threads.emplace_back(work, n_rows * t / n_workers, n_rows * (t + 1) / n_workers);
  }
  work(0, n_rows / n_workers);
  for (std::thread& th : threads) th.join();
}

namespace {

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
bool can_quantize_to(DType t) {
  const QuantTraits& tr = quant_traits(t);
  return dtype_facts(t).known && (tr.from_float_ref != nullptr || tr.quantize_rows != nullptr);
}
bool is_token_embd(std::string_view n) { return n == "token_embd.weight" || n == "per_layer_token_embd.weight"; }
uint64_t n_matrices(const gguf::TensorInfo& t) { return t.dims.size() > 2 ? t.dims[2] : 1; }

// The imatrix as the quantizer takes it: importance per tensor name, after the model check and the
// --include/--exclude-weights filters (llama-quantize's prepare_imatrix).
struct LoadedImatrix {
  Imatrix file;
  std::map<std::string, std::vector<float>, std::less<>> importance;
};

Result<LoadedImatrix> load_imatrix(const QuantizeOptions& o, const gguf::GgufFile& model) {
  LoadedImatrix out;
  OX_ASSIGN_OR_RETURN(out.file, read_imatrix(o.imatrix_path));
  size_t matching = 0;
  for (const auto& [name, e] : out.file.entries) matching += model.find_tensor(name) != nullptr ? 1 : 0;
  if (matching == 0) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("imatrix %s: none of its %zu entries (the first: '%s') names a tensor of %s; is it for "
                        "another model?", o.imatrix_path.c_str(), out.file.entries.size(),
                        out.file.entries.begin()->first.c_str(), model.name().c_str()));
  }
  for (const auto& entry : out.file.entries) {
    const std::string& name = entry.first;  // (clang 14 cannot capture a structured binding)
    auto any_in = [&](const std::vector<std::string>& parts) {
      return std::any_of(parts.begin(), parts.end(), [&](const std::string& p) { return contains_part(name, p); });
    };
    if (any_in(o.exclude_weights)) continue;
    if (!o.include_weights.empty() && !any_in(o.include_weights)) continue;
    out.importance.emplace(name, imatrix_importance(out.file, entry.second));
  }
  return out;
}

// One tensor's conversion, decided before anything is written.
struct TensorPlan {
  DType type = DType::F32;
  const std::vector<float>* importance = nullptr;
};

Status check_conversion(const std::string& file, const gguf::TensorInfo& t, DType target, const QuantizeOptions& o) {
  if (!can_quantize_to(target)) {
    return error(ErrorCode::kUnsupported, strfmt("tensor '%s': oxidize cannot quantize to %s", t.name.c_str(),
                                                 dtype_name(target)));
  }
  if (t.dims[0] % dtype_facts(target).block_size != 0) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("tensor '%s': its rows of %llu are not a multiple of %s's block of %u", t.name.c_str(),
                        static_cast<unsigned long long>(t.dims[0]), dtype_name(target),
                        dtype_facts(target).block_size));
  }
  if (is_quantized(t.type) && !o.allow_requantize) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: tensor '%s' is already %s: requantizing is disabled (--allow-requantize allows it, at a "
                        "cost in quality)", file.c_str(), t.name.c_str(), dtype_name(t.type)));
  }
  if (quant_traits(t.type).to_float == nullptr || (!is_float_type(t.type) && !is_quantized(t.type))) {
    return error(ErrorCode::kUnsupported, strfmt("%s: tensor '%s' is %s, which cannot be converted", file.c_str(),
                                                 t.name.c_str(), dtype_name(t.type)));
  }
  return Status::ok();
}

// The importance vector for one converted tensor, checked against its shape, and the refusal of a
// type that needs one when there is none (llama.cpp exempts token_embd and output from both).
Result<const std::vector<float>*> importance_for(const gguf::TensorInfo& t, DType target, const QuantizeOptions& o,
                                                  const QuantPreset& preset, const LoadedImatrix* imatrix) {
  const std::vector<float>* imp = nullptr;
  if (imatrix != nullptr) {
    const auto it = imatrix->importance.find(t.name);
    if (it != imatrix->importance.end()) {
      const uint64_t want = t.dims[0] * n_matrices(t);
      if (it->second.size() == want) {
        imp = &it->second;
      } else if (!is_token_embd(t.name)) {  // llama-quantize ignores a token_embd mismatch
        return error(ErrorCode::kInvalidArgument,
                     strfmt("imatrix %s: entry '%s' has %zu values but the tensor has %llu columns x %llu matrices "
                            "= %llu; is the imatrix for another model?", o.imatrix_path.c_str(), t.name.c_str(),
                            it->second.size(), static_cast<unsigned long long>(t.dims[0]),
                            static_cast<unsigned long long>(n_matrices(t)), static_cast<unsigned long long>(want)));
      }
    }
  }
  if (!is_quantized(target)) return nullptr;  // F16/BF16/F32 take no importance
  // The format's own requirement, and llama-quantize's per-tensor one (tensor_requires_imatrix).
  const bool needs = o.needs_importance != nullptr
                         ? o.needs_importance(target)
                         : quant_traits(target).needs_importance || quant_needs_importance(t.name, target);
  if (needs && imp == nullptr && !is_token_embd(t.name) && t.name != "output.weight") {
    if (imatrix == nullptr || imatrix->importance.empty()) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("%s needs an importance matrix (--imatrix FILE, from `oxidize imatrix`): tensor '%s' would "
                          "be %s", preset.name, t.name.c_str(), dtype_name(target)));
    }
    return error(ErrorCode::kInvalidArgument,
                 strfmt("imatrix %s has no entry for tensor '%s', which %s needs", o.imatrix_path.c_str(),
                        t.name.c_str(), dtype_name(target)));
  }
  return imp;
}

// Closes the file on every path; removes it unless close_and_keep() was called.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)), f_(std::fopen(path_.c_str(), "wb")) {}
  ~OutputFile() {
    if (f_ != nullptr) std::fclose(f_);
    if (!kept_) std::remove(path_.c_str());
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  FILE* get() const { return f_; }
  Status close_and_keep() {
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) return error(ErrorCode::kIo, strfmt("%s: close failed", path_.c_str()));
    kept_ = true;
    return Status::ok();
  }

 private:
  std::string path_;
  FILE* f_;
  bool kept_ = false;
};

// One tensor's name in the output under --prune-layers: empty when its layer is pruned.
std::string pruned_name(const std::string& name, const std::vector<uint32_t>& pruned) {
  const auto [at, len] = block_number_at(name);
  if (pruned.empty() || at == std::string_view::npos) return name;
  const uint32_t layer = static_cast<uint32_t>(std::stoul(name.substr(at, len)));
  if (std::binary_search(pruned.begin(), pruned.end(), layer)) return std::string();
  const auto below = std::lower_bound(pruned.begin(), pruned.end(), layer) - pruned.begin();
  return name.substr(0, at) + std::to_string(layer - static_cast<uint32_t>(below)) + name.substr(at + len);
}

// The general.file_type llama-quantize's COPY keeps: the input's, else llama_model_loader's guess
// from the type most tensors have (the first to lead, in its order), marked as guessed.
Result<uint32_t> input_llama_ftype(const gguf::GgufFile& in, std::span<const gguf::TensorInfo* const> loader_order) {
  if (in.find("general.file_type") != nullptr) return in.get_u32("general.file_type");
  std::map<DType, uint32_t> n_of_type;
  DType most = DType::F32;
  uint32_t n_most = 0;
  for (const gguf::TensorInfo* t : loader_order) {
    const uint32_t n = ++n_of_type[t->type];
    if (n > n_most) {
      n_most = n;
      most = t->type;
    }
  }
  return llama_ftype_guessed_from(most) | kLlamaFtypeGuessed;
}

bool is_imatrix_key(std::string_view key) { return key.substr(0, 17) == "quantize.imatrix."; }

// llama-quantize's order (llama_model_loader's weights_map): by the "blk.N." layer (-1 for the
// rest), then by name; under --keep-split by shard, then by place in it. The rules' layer counters
// run in this order too.
std::vector<const gguf::TensorInfo*> quantize_order(const gguf::GgufFile& in, bool keep_split) {
  std::vector<const gguf::TensorInfo*> ordered;
  for (const gguf::TensorInfo& t : in.tensors()) ordered.push_back(&t);
  auto layer_key = [](const std::string& name) {  // sscanf(name, "blk.%d.") without its overflow
    const auto [at, len] = block_number_at(name);
    return at == 4 ? std::atoi(name.c_str() + 4) : -1;
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const gguf::TensorInfo* a, const gguf::TensorInfo* b) {
    const int la = layer_key(a->name), lb = layer_key(b->name);
    return la != lb ? la < lb : a->name < b->name;
  });
  if (keep_split) {
    std::stable_sort(ordered.begin(), ordered.end(), [](const gguf::TensorInfo* a, const gguf::TensorInfo* b) {
      return a->shard != b->shard ? a->shard < b->shard : a->offset < b->offset;
    });
  }
  return ordered;
}

// Input metadata (split bookkeeping dropped), then the keys llama-quantize sets, each replacing an
// input key of that name and moving to the end: the version and file type, the --override-kv
// values, the imatrix facts (llama-quantize passes those as overrides after the user's); where one
// key is set twice the later value, at the later place, is the one kept.
Status write_metadata(const gguf::GgufFile& in, uint32_t llama_ftype, const QuantizeOptions& o,
                      const LoadedImatrix* imatrix, const QuantModelFacts& facts, gguf::GgufWriter& w) {
  const uint32_t n_layer_out = facts.n_layer - static_cast<uint32_t>(o.prune_layers.size());
  std::vector<gguf::KvOverride> tail;
  tail.push_back({"general.quantization_version", gguf::encode_u32(2)});  // GGML_QNT_VERSION
  tail.push_back({"general.file_type", gguf::encode_u32(llama_ftype)});
  tail.insert(tail.end(), o.override_kv.begin(), o.override_kv.end());
  if (imatrix != nullptr) {
    // llama-quantize's overrides: strings cut to 127 bytes, counts as u32.
    tail.push_back({"quantize.imatrix.file", gguf::encode_string(std::string_view(o.imatrix_path).substr(0, 127))});
    if (!imatrix->file.datasets.empty()) {
      tail.push_back({"quantize.imatrix.dataset",
                      gguf::encode_string(std::string_view(imatrix->file.datasets[0]).substr(0, 127))});
    }
    tail.push_back({"quantize.imatrix.entries_count",
                    gguf::encode_u32(static_cast<uint32_t>(imatrix->importance.size()))});
    if (imatrix->file.chunk_count > 0) {
      tail.push_back({"quantize.imatrix.chunks_count", gguf::encode_u32(imatrix->file.chunk_count)});
    }
  }
  if (!o.prune_layers.empty()) tail.push_back({facts.arch + ".block_count", gguf::encode_u32(n_layer_out)});
  auto set_later = [&](std::string_view key, size_t from) {
    return std::any_of(tail.begin() + static_cast<std::ptrdiff_t>(from), tail.end(),
                       [&](const gguf::KvOverride& kv) { return kv.key == key; });
  };
  for (const auto& [key, value] : in.metadata()) {
    if (gguf::is_split_key(key)) continue;
    if (imatrix != nullptr && is_imatrix_key(key)) continue;
    if (set_later(key, 0)) continue;
    OX_TRY(w.add(key, gguf::encode_value(value)).with_context(in.name()));
  }
  for (size_t i = 0; i < tail.size(); ++i) {
    if (set_later(tail[i].key, i + 1)) continue;
    OX_TRY(w.add(tail[i].key, tail[i].value).with_context(strfmt("setting %s", tail[i].key.c_str())));
  }
  return Status::ok();
}

constexpr uint64_t kDefaultMaxBuffer = 8ull << 30;  // llama-quant.cpp's LLAMA_QUANT_MAX_BUF_SIZE

// One tensor written as plan.type, in slabs of rows within one matrix (each expert's rows take its
// own importance vector) that keep `buffer` and the float rows within max_buffer bytes, counted as
// llama-quantize counts them. Rows convert independently, so the bytes do not depend on the slabs.
// Each slab's input pages are released once written: the mapped model stays out of the peak memory.
Status write_tensor(const gguf::GgufFile& in, const gguf::TensorInfo& t, const std::string& name,
                    const TensorPlan& plan, uint64_t max_buffer, const QuantizeOptions& o,
                    std::vector<uint8_t>& buffer, gguf::GgufWriter& w) {
  const uint64_t n_per_row = t.dims[0];
  const uint64_t rows_per_matrix = t.n_elements / n_per_row / n_matrices(t);
  const uint64_t src_row = dtype_row_bytes(t.type, n_per_row);
  const uint64_t dst_row = dtype_row_bytes(plan.type, n_per_row);
  const bool convert = plan.type != t.type;
  const uint64_t row_cost = convert ? src_row + dst_row + (t.type == DType::F32 ? 0 : n_per_row * sizeof(float))
                                    : src_row;
  const uint64_t slab = std::max<uint64_t>(1, std::min(rows_per_matrix, max_buffer / row_cost));
  if (convert) buffer.resize(std::max<size_t>(buffer.size(), slab * dst_row));
  for (uint64_t m = 0; m < n_matrices(t); ++m) {
    const float* importance = plan.importance != nullptr ? plan.importance->data() + m * n_per_row : nullptr;
    for (uint64_t r = 0; r < rows_per_matrix; r += slab) {
      const uint64_t n = std::min(slab, rows_per_matrix - r);
      const uint64_t offset = (m * rows_per_matrix + r) * src_row;
      std::span<const uint8_t> out(t.data + offset, n * src_row);
      if (convert) {
        convert_rows(t.type, t.data + offset, plan.type, buffer.data(), static_cast<int64_t>(n),
                     static_cast<int64_t>(n_per_row), o.n_threads, importance, 0, o.quantize);
        out = std::span<const uint8_t>(buffer.data(), n * dst_row);
      }
      OX_TRY(w.write_tensor_part(name, out));
      in.release_tensor_bytes(t, offset, n * src_row);
    }
  }
  return Status::ok();
}

Result<QuantizeStats> quantize_impl(const std::string& in_path, const std::string& out_path, const QuantPreset& preset,
                                    const QuantizeOptions& o, FunctionRef<void(const QuantizeTensorEvent&)> on_tensor) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> in, gguf::GgufFile::open(in_path));
  OX_ASSIGN_OR_RETURN(const QuantModelFacts facts, read_quant_model_facts(*in));
  std::unique_ptr<LoadedImatrix> imatrix;
  if (!o.imatrix_path.empty()) {
    OX_ASSIGN_OR_RETURN(LoadedImatrix loaded, load_imatrix(o, *in));
    imatrix = std::make_unique<LoadedImatrix>(std::move(loaded));
  }
  QuantTypeOptions types = o.types;
  types.has_imatrix = imatrix != nullptr && !imatrix->importance.empty();

  // --prune-layers: the output's tensors and names, and the facts the type rules see: llama.cpp
  // counts attn_v tensors over what is left, but its ffn rules keep the model's own layer count.
  QuantModelFacts out_facts = facts;
  std::vector<const gguf::TensorInfo*> tensors;
  std::vector<std::string> names;
  for (uint32_t layer : o.prune_layers) {
    if (layer >= facts.n_layer) {
      return error(ErrorCode::kInvalidArgument, strfmt("--prune-layers %u: %s has %u layers (0..%u)", layer,
                                                       in_path.c_str(), facts.n_layer, facts.n_layer - 1));
    }
  }
  if (!o.prune_layers.empty()) {
    if (o.prune_layers.size() >= facts.n_layer) {
      return error(ErrorCode::kInvalidArgument, strfmt("--prune-layers would leave none of the %u layers of %s",
                                                       facts.n_layer, in_path.c_str()));
    }
    out_facts.n_attention_wv = 0;
  }
  for (const gguf::TensorInfo* tp : quantize_order(*in, o.keep_split)) {
    const gguf::TensorInfo& t = *tp;
    std::string name = pruned_name(t.name, o.prune_layers);
    if (name.empty()) continue;
    if (!o.prune_layers.empty() && quant_group_of(name) == QuantGroup::kAttnV) ++out_facts.n_attention_wv;
    tensors.push_back(&t);
    names.push_back(std::move(name));
  }

  // The output files: one, or under --keep-split one per input shard up to the last that holds a
  // kept tensor (llama-quantize's count). The first holds the metadata.
  uint32_t n_out = 1;
  for (const gguf::TensorInfo* t : tensors) n_out = o.keep_split ? std::max(n_out, t->shard + 1) : 1;
  auto out_of = [&](const gguf::TensorInfo& t) { return o.keep_split ? t.shard : 0u; };
  uint32_t llama_ftype = preset.llama_ftype;
  if (preset.only_copy) {
    OX_ASSIGN_OR_RETURN(llama_ftype, input_llama_ftype(*in, quantize_order(*in, false)));
  }
  std::vector<gguf::GgufWriter> writers(n_out);
  OX_TRY(write_metadata(*in, llama_ftype, o, types.has_imatrix ? imatrix.get() : nullptr, out_facts, writers[0]));
  for (uint32_t k = 0; k < n_out && n_out > 1; ++k) {
    OX_TRY(writers[k].add(gguf::kSplitNoKey, gguf::encode_u16(static_cast<uint16_t>(k))));
    OX_TRY(writers[k].add(gguf::kSplitCountKey, gguf::encode_u16(static_cast<uint16_t>(n_out))));
    OX_TRY(writers[k].add(gguf::kSplitTensorsCountKey, gguf::encode_i32(static_cast<int32_t>(tensors.size()))));
  }
  OX_ASSIGN_OR_RETURN(QuantTypePlan type_plan, QuantTypePlan::create(preset, out_facts, types));
  QuantizeStats stats;
  std::vector<TensorPlan> plans;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const gguf::TensorInfo& t = *tensors[i];
    TensorPlan p;
    p.type = type_plan.next(names[i], t.dims, t.type).type;
    if (p.type != t.type) {
      OX_TRY(check_conversion(in_path, t, p.type, o));
      Result<const std::vector<float>*> imp =
          importance_for(t, p.type, o, preset, types.has_imatrix ? imatrix.get() : nullptr);
      // A dry run without an imatrix reports the first tensor that would need one (llama-quantize's
      // "will require an imatrix" warning); a real run refuses there.
      if (!imp.ok() && o.dry_run && imatrix == nullptr) {
        if (stats.needs_imatrix.empty()) stats.needs_imatrix = t.name;
      } else {
        OX_ASSIGN_OR_RETURN(p.importance, std::move(imp));
      }
    }
    plans.push_back(p);
    OX_TRY(writers[out_of(t)].declare_tensor(names[i], t.dims, p.type));
  }
  for (uint32_t k = 1; k < n_out; ++k) {
    if (writers[k].tensor_count() == 0) {  // (llama-quantize crashes here)
      return error(ErrorCode::kInvalidArgument, strfmt("--keep-split: shard %u of %u (%s) would hold no tensors",
                                                       k + 1, n_out, in->shards()[k].path.c_str()));
    }
  }
  std::vector<std::string> out_paths;
  for (uint32_t k = 0; k < n_out; ++k) {
    out_paths.push_back(o.keep_split ? gguf::split_path(gguf::split_output_prefix(out_path), k, n_out) : out_path);
    for (const gguf::ShardInfo& shard : in->shards()) {
      if (!o.dry_run && out_paths.back() == shard.path) {
        return error(ErrorCode::kInvalidArgument, strfmt("quantize: the output %s is an input file",
                                                         shard.path.c_str()));
      }
    }
  }
  std::vector<std::unique_ptr<OutputFile>> outs;
  for (uint32_t k = 0; k < n_out && !o.dry_run; ++k) {
    outs.push_back(std::make_unique<OutputFile>(out_paths[k]));
    if (outs[k]->get() == nullptr) return error(ErrorCode::kIo, strfmt("cannot create %s", out_paths[k].c_str()));
    OX_TRY(writers[k].begin(outs[k]->get()).with_context(out_paths[k]));
  }
  stats.n_imatrix_entries = types.has_imatrix ? imatrix->importance.size() : 0;
  const uint64_t max_buffer = o.max_buffer_bytes > 0 ? o.max_buffer_bytes : kDefaultMaxBuffer;
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const gguf::TensorInfo& t = *tensors[i];
    const TensorPlan& p = plans[i];
    const uint64_t n_per_row = t.dims[0];
    const uint64_t n_rows = t.n_elements / n_per_row;
    uint64_t bytes_out = t.n_bytes;
    if (p.type != t.type) bytes_out = dtype_row_bytes(p.type, n_per_row) * n_rows;
    if (!o.dry_run) {
      OX_TRY(write_tensor(*in, t, names[i], p, max_buffer, o, buffer, writers[out_of(t)])
                 .with_context(out_paths[out_of(t)]));
    }
    stats.bytes_in += t.n_bytes;
    stats.bytes_out += bytes_out;
    stats.n_elements += t.n_elements;
    on_tensor(QuantizeTensorEvent{i, tensors.size(), names[i], t.dims, t.type, p.type, t.n_bytes, bytes_out,
                                  p.importance != nullptr});
  }
  if (o.dry_run) return stats;
  for (uint32_t k = 0; k < n_out; ++k) OX_TRY(writers[k].finish().with_context(out_paths[k]));
  for (const std::unique_ptr<OutputFile>& out : outs) OX_TRY(out->close_and_keep());
  stats.out_paths = std::move(out_paths);
  return stats;
}

}  // namespace

Result<QuantizeStats> quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                                    const QuantizeOptions& options,
                                    FunctionRef<void(const QuantizeTensorEvent&)> on_tensor) {
  const QuantPreset* p = find_quant_preset(preset);
  if (p == nullptr) {
    std::string names;
    for (const QuantPreset& q : quant_presets()) names += std::string(names.empty() ? "" : ", ") + q.name;
    return error(ErrorCode::kInvalidArgument, strfmt("unknown quantization preset '%.*s' (known: %s)",
                                                     static_cast<int>(preset.size()), preset.data(), names.c_str()));
  }
  if (!options.dry_run && in_path == out_path) {
    return error(ErrorCode::kInvalidArgument, strfmt("quantize: input and output are the same file %s", in_path.c_str()));
  }
  if (!options.include_weights.empty() && !options.exclude_weights.empty()) {
    return error(ErrorCode::kInvalidArgument, "--include-weights and --exclude-weights cannot be used together");
  }
  if (options.imatrix_path.empty() && (!options.include_weights.empty() || !options.exclude_weights.empty())) {
    return error(ErrorCode::kInvalidArgument, "--include-weights and --exclude-weights need --imatrix FILE");
  }
  return quantize_impl(in_path, out_path, *p, options, on_tensor);
}

Status quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                     int n_threads) {
  QuantizeOptions options;
  options.n_threads = n_threads;
  auto ignore = [](const QuantizeTensorEvent&) {};
  const Result<QuantizeStats> r = quantize_gguf(in_path, out_path, preset, options, ignore);
  return r.ok() ? Status::ok() : r.status();
}

}  // namespace ox
