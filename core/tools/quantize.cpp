// quantize_gguf and the tensor-type rules of llama.cpp's quantization presets (facts from
// llama.cpp's src/llama-quant.cpp: which tensors are quantized, which get more bits, fallbacks).
#include "core/tools/quantize.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <thread>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

// llama.cpp's LLAMA_FTYPE_* numbers (include/llama.h).
enum Ftype : uint32_t {
  kAllF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 7, kQ5_0 = 8, kQ5_1 = 9, kQ2_K = 10,
  kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_S = 16, kQ5_K_M = 17,
  kQ6_K = 18, kIQ4_NL = 25, kIQ4_XS = 30, kBF16 = 32, kTQ1_0 = 36, kTQ2_0 = 37, kMXFP4_MOE = 38,
};

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_quantized(DType t) { return dtype_facts(t).block_size > 1; }

// Layer index from "blk.N." (0 if the name has none).
int layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return 0;
  int v = 0;
  for (size_t i = 4; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    v = v * 10 + (name[i] - '0');
    if (v > 1000000) break;
  }
  return v;
}

// The tensors llama.cpp never quantizes: vectors, norms, routers and a list of small or
// precision-sensitive matrices of other architectures.
bool allows_quantization(std::string_view name, std::span<const uint64_t> dims) {
  if (dims.size() < 2) return false;
  if (name.size() < 6 || name.substr(name.size() - 6) != "weight") return false;
  static constexpr std::string_view kNever[] = {
      "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
      "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
      "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
      "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
      "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
      "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
      "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
      "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd"};
  for (std::string_view n : kNever) {
    if (contains(name, n)) return false;
  }
  return name != "position_embd.weight" && name != "token_types.weight";
}

enum class Category { kTokenEmbd, kOutput, kAttnV, kAttnK, kAttnQ, kAttnOutput, kFfnUp, kFfnGate, kFfnDown, kOther };

Category category_of(std::string_view name) {
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::kTokenEmbd;
  // Fused qkv and MLA's kv_b count as attn_v: llama.cpp gives all three the attn_v rules.
  if (contains(name, "attn_qkv.weight") || contains(name, "attn_kv_b.weight") || contains(name, "attn_v.weight")) {
    return Category::kAttnV;
  }
  if (contains(name, "attn_k.weight")) return Category::kAttnK;
  if (contains(name, "attn_q.weight")) return Category::kAttnQ;
  if (contains(name, "attn_output.weight")) return Category::kAttnOutput;
  if (contains(name, "ffn_up")) return Category::kFfnUp;
  if (contains(name, "ffn_gate")) return Category::kFfnGate;
  if (contains(name, "ffn_down")) return Category::kFfnDown;
  return Category::kOther;
}

// llama.cpp's "use more bits" layers: the first and last eighth, and every third in between.
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// MXFP4_MOE: the experts' 3-D tensors (a third dimension over the experts) in MXFP4, every other
// quantized tensor in Q8_0. BailingMoE3's MLA projections are 3-D too: there only the FFN ones.
DType mxfp4_moe_type(const QuantModelFacts& f, Category cat, std::span<const uint64_t> dims) {
  const bool experts = dims.size() > 2 && dims[2] > 1;
  const bool ffn = cat == Category::kFfnUp || cat == Category::kFfnGate || cat == Category::kFfnDown;
  return experts && (f.arch != "bailingmoe3" || ffn) ? DType::MXFP4 : DType::Q8_0;
}

// The preset's rules for one quantized tensor (llama_tensor_get_type_impl, for the presets we offer).
DType apply_rules(const QuantPreset& p, const QuantModelFacts& f, std::string_view name, std::span<const uint64_t> dims,
                  DType t) {
  const uint32_t ft = p.llama_ftype;
  const uint64_t nx = dims[0];
  const bool falcon = f.arch == "falcon";
  const uint32_t n_gqa = f.n_head_kv > 0 ? f.n_head / f.n_head_kv : 0;
  const bool is_70b = f.arch == "llama" && f.n_layer == 80 && f.n_head != f.n_head_kv;
  const Category cat = category_of(name);
  if (cat == Category::kOutput || (!f.has_output && cat == Category::kTokenEmbd)) {
    if (ft == kMXFP4_MOE || falcon || nx % dtype_facts(t).block_size != 0) return DType::Q8_0;
    return t != DType::Q8_0 ? DType::Q6_K : t;
  }
  if (ft == kMXFP4_MOE) return mxfp4_moe_type(f, cat, dims);
  if (cat == Category::kTokenEmbd) return ft == kTQ1_0 || ft == kTQ2_0 ? DType::Q4_K : t;
  const int i_layer = layer_of(name);
  const int n_layer = static_cast<int>(f.n_layer);
  switch (cat) {
    case Category::kAttnV: {
      // i_attention_wv in llama.cpp counts attn_v tensors in layer order: the layer index.
      const int i = i_layer, n = static_cast<int>(f.n_attention_wv);
      if (ft == kQ2_K) t = n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
      else if (ft == kQ3_K_M) t = i < 2 ? DType::Q5_K : DType::Q4_K;
      else if (ft == kQ3_K_L) t = DType::Q5_K;
      else if ((ft == kIQ4_NL || ft == kIQ4_XS) && n_gqa >= 4) t = DType::Q5_K;
      else if ((ft == kQ4_K_M || ft == kQ5_K_M) && use_more_bits(i, n)) t = DType::Q6_K;
      else if (ft == kQ4_K_S && i < 4) t = DType::Q5_K;
      if (is_70b && (t == DType::Q3_K || t == DType::Q4_K)) t = DType::Q5_K;
      if (f.n_expert == 8) t = DType::Q8_0;
      return t;
    }
    case Category::kAttnK:
      return f.n_expert == 8 ? DType::Q8_0 : t;
    case Category::kFfnDown: {
      const int i = i_layer, n = n_layer;
      if (ft == kQ2_K) t = DType::Q3_K;
      else if (ft == kQ3_K_M) t = i < n / 16 ? DType::Q5_K : (!falcon || use_more_bits(i, n)) ? DType::Q4_K : DType::Q3_K;
      else if (ft == kQ3_K_L) t = falcon ? DType::Q4_K : DType::Q5_K;
      else if (ft == kQ4_K_M) {
        if (falcon) t = i < n / 16 ? DType::Q6_K : use_more_bits(i, n) ? DType::Q5_K : DType::Q4_K;
        else if (use_more_bits(i, n)) t = DType::Q6_K;
      } else if (i < n / 8 && (ft == kIQ4_NL || ft == kIQ4_XS)) t = DType::Q5_K;  // no imatrix here
      else if (ft == kQ5_K_M && use_more_bits(i, n)) t = DType::Q6_K;
      else if (ft == kQ4_K_S && !falcon && i < n / 8) t = DType::Q5_K;
      return t;
    }
    case Category::kAttnOutput:
      if (falcon) return ft == kQ3_K_L ? DType::Q4_K : t;
      if (f.n_expert == 8) {
        const bool bump = ft == kQ2_K || ft == kQ3_K_S || ft == kQ3_K_M || ft == kIQ4_NL || ft == kQ4_K_S ||
                          ft == kQ4_K_M || ft == kIQ4_XS;
        return bump ? DType::Q5_K : t;
      }
      if (ft == kQ2_K) return DType::Q3_K;
      if (ft == kQ3_K_M) return DType::Q4_K;
      if (ft == kQ3_K_L) return DType::Q5_K;
      return t;
    default:
      return t;
  }
}

// llama.cpp's fallback when the row length is not a multiple of the chosen type's block: a
// 32-block type for the 256-block ones, F16 when even that does not fit. For the 32-block types
// themselves we also use F16 (stories260K's ffn_down rows of 172 under Q4_0, say), as the
// llama.cpp in node-llama-cpp 3.22.1 does; newer llama.cpp refuses such a model instead.
DType fallback_for_row(uint64_t nx, DType t) {
  if (nx % dtype_facts(t).block_size == 0) return t;
  DType f = DType::F16;
  switch (t) {
    case DType::IQ4_XS: f = DType::IQ4_NL; break;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::TQ1_0:
    case DType::TQ2_0: f = DType::Q4_0; break;
    case DType::Q4_K: f = DType::Q5_0; break;
    case DType::Q5_K: f = DType::Q5_1; break;
    case DType::Q6_K: f = DType::Q8_0; break;
    default: break;
  }
  return nx % dtype_facts(f).block_size == 0 ? f : DType::F16;
}

}  // namespace

const std::vector<QuantPreset>& quant_presets() {
  static const std::vector<QuantPreset> presets = {
      {"F32", DType::F32, kAllF32},      {"F16", DType::F16, kF16},         {"BF16", DType::BF16, kBF16},
      {"Q4_0", DType::Q4_0, kQ4_0},      {"Q4_1", DType::Q4_1, kQ4_1},      {"Q5_0", DType::Q5_0, kQ5_0},
      {"Q5_1", DType::Q5_1, kQ5_1},      {"Q8_0", DType::Q8_0, kQ8_0},      {"Q2_K", DType::Q2_K, kQ2_K},
      {"Q3_K_S", DType::Q3_K, kQ3_K_S},  {"Q3_K_M", DType::Q3_K, kQ3_K_M},  {"Q3_K_L", DType::Q3_K, kQ3_K_L},
      {"Q4_K_S", DType::Q4_K, kQ4_K_S},  {"Q4_K_M", DType::Q4_K, kQ4_K_M},  {"Q5_K_S", DType::Q5_K, kQ5_K_S},
      {"Q5_K_M", DType::Q5_K, kQ5_K_M},  {"Q6_K", DType::Q6_K, kQ6_K},      {"IQ4_NL", DType::IQ4_NL, kIQ4_NL},
      {"IQ4_XS", DType::IQ4_XS, kIQ4_XS},  {"TQ1_0", DType::TQ1_0, kTQ1_0},   {"TQ2_0", DType::TQ2_0, kTQ2_0},
      {"MXFP4_MOE", DType::MXFP4, kMXFP4_MOE},
  };
  return presets;
}

const QuantPreset* find_quant_preset(std::string_view name) {
  // llama-quantize's aliases: Q3_K, Q4_K and Q5_K mean their _M mixes.
  if (equals_ignore_case(name, "Q3_K")) name = "Q3_K_M";
  if (equals_ignore_case(name, "Q4_K")) name = "Q4_K_M";
  if (equals_ignore_case(name, "Q5_K")) name = "Q5_K_M";
  for (const QuantPreset& p : quant_presets()) {
    if (equals_ignore_case(name, p.name)) return &p;
  }
  return nullptr;
}

DType quant_tensor_type(const QuantPreset& preset, const QuantModelFacts& facts, std::string_view name,
                        std::span<const uint64_t> dims, DType current) {
  if (!allows_quantization(name, dims)) return current;
  if (!is_quantized(preset.default_type)) return preset.default_type;
  const DType t = apply_rules(preset, facts, name, dims, preset.default_type);
  return fallback_for_row(dims[0], t);
}

void convert_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows,
                  int64_t n_per_row, int n_threads) {
  const QuantTraits& from = quant_traits(src_type);
  const QuantTraits& to = quant_traits(dst_type);
  OX_CHECK(from.to_float != nullptr && to.from_float_ref != nullptr);
  const uint64_t src_row = dtype_row_bytes(src_type, static_cast<uint64_t>(n_per_row));
  const uint64_t dst_row = dtype_row_bytes(dst_type, static_cast<uint64_t>(n_per_row));
  auto work = [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(n_per_row));
    for (int64_t r = r0; r < r1; ++r) {
      from.to_float(src + static_cast<uint64_t>(r) * src_row, row.data(), n_per_row);
      to.from_float_ref(row.data(), dst + static_cast<uint64_t>(r) * dst_row, n_per_row);
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

// A count that may be stored per layer as an array (then layer 0's), else `fallback`.
Result<uint32_t> read_count(const gguf::GgufFile& f, const std::string& key, uint32_t fallback) {
  const gguf::Value* v = f.find(key);
  if (v != nullptr && v->type == gguf::ValueType::ARRAY) {
    if (v->count == 0 || v->elem_type == gguf::ValueType::STRING || v->elem_type == gguf::ValueType::ARRAY) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: key %s is not an array of numbers", f.name().c_str(), key.c_str()));
    }
    const int64_t first = v->integer_at(0);
    return first < 0 ? 0u : static_cast<uint32_t>(first);
  }
  return f.get_u32_or(key, fallback);
}

Result<QuantModelFacts> read_facts(const gguf::GgufFile& f) {
  QuantModelFacts facts;
  OX_ASSIGN_OR_RETURN(std::string_view arch, f.get_string("general.architecture"));
  facts.arch = std::string(arch);
  OX_ASSIGN_OR_RETURN(facts.n_layer, read_count(f, facts.arch + ".block_count", 0));
  OX_ASSIGN_OR_RETURN(facts.n_head, read_count(f, facts.arch + ".attention.head_count", 0));
  OX_ASSIGN_OR_RETURN(facts.n_head_kv, read_count(f, facts.arch + ".attention.head_count_kv", facts.n_head));
  OX_ASSIGN_OR_RETURN(facts.n_expert, read_count(f, facts.arch + ".expert_count", 0));
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.name == "output.weight") facts.has_output = true;
    if (category_of(t.name) == Category::kAttnV) ++facts.n_attention_wv;
  }
  return facts;
}

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// Closes the file on every path; removes it unless keep() was called.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)), f_(std::fopen(path_.c_str(), "wb")) {}
  ~OutputFile() {
    if (f_ != nullptr) std::fclose(f_);
    if (!kept_) std::remove(path_.c_str());
  }
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

Status quantize_impl(const std::string& in_path, const std::string& out_path, const QuantPreset& preset,
                     int n_threads) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> in, gguf::GgufFile::open(in_path));
  OX_ASSIGN_OR_RETURN(const QuantModelFacts facts, read_facts(*in));

  gguf::GgufWriter w;
  for (const auto& [key, value] : in->metadata()) {
    // llama.cpp drops split bookkeeping and re-appends the two quantization keys at the end.
    if (key == "general.file_type" || key == "general.quantization_version") continue;
    if (key == "split.no" || key == "split.count" || key == "split.tensors.count") continue;
    OX_TRY(w.add(key, gguf::encode_value(value)).with_context(in_path));
  }
  OX_TRY(w.add_u32("general.quantization_version", 2));  // GGML_QNT_VERSION
  OX_TRY(w.add_u32("general.file_type", preset.llama_ftype));

  std::vector<DType> types;
  for (const gguf::TensorInfo& t : in->tensors()) {
    const DType target = quant_tensor_type(preset, facts, t.name, t.dims, t.type);
    if (target != t.type && !is_float_type(t.type)) {
      return error(ErrorCode::kUnsupported,
                   strfmt("%s: tensor '%s' is %s: only F32/F16/BF16 tensors can be quantized", in_path.c_str(),
                          t.name.c_str(), dtype_name(t.type)));
    }
    types.push_back(target);
    OX_TRY(w.declare_tensor(t.name, t.dims, target));
  }

  OutputFile out(out_path);
  if (out.get() == nullptr) return error(ErrorCode::kIo, strfmt("cannot create %s", out_path.c_str()));
  OX_TRY(w.begin(out.get()).with_context(out_path));
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < in->tensors().size(); ++i) {
    const gguf::TensorInfo& t = in->tensors()[i];
    if (types[i] == t.type) {
      OX_TRY(w.write_tensor_data(t.name, std::span<const uint8_t>(t.data, t.n_bytes)).with_context(out_path));
      continue;
    }
    const uint64_t n_per_row = t.dims[0];
    const uint64_t n_rows = t.n_elements / n_per_row;
    buffer.resize(dtype_row_bytes(types[i], n_per_row) * n_rows);
    convert_rows(t.type, t.data, types[i], buffer.data(), static_cast<int64_t>(n_rows),
                 static_cast<int64_t>(n_per_row), n_threads);
    OX_TRY(w.write_tensor_data(t.name, buffer).with_context(out_path));
  }
  OX_TRY(w.finish().with_context(out_path));
  return out.close_and_keep();
}

}  // namespace

Status quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                     int n_threads) {
  const QuantPreset* p = find_quant_preset(preset);
  if (p == nullptr) {
    std::string names;
    for (const QuantPreset& q : quant_presets()) names += std::string(names.empty() ? "" : ", ") + q.name;
    return error(ErrorCode::kInvalidArgument, strfmt("unknown quantization preset '%.*s' (known: %s)",
                                                     static_cast<int>(preset.size()), preset.data(), names.c_str()));
  }
  if (in_path == out_path) {
    return error(ErrorCode::kInvalidArgument, strfmt("quantize: input and output are the same file %s", in_path.c_str()));
  }
  return quantize_impl(in_path, out_path, *p, n_threads);
}

}  // namespace ox
