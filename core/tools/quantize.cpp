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
#include "core/model/tensor_names.h"
#include "core/quant/formats.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

// llama.cpp's LLAMA_FTYPE_* numbers (include/llama.h).
enum Ftype : uint32_t {
  kAllF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 7, kQ5_0 = 8, kQ5_1 = 9, kQ2_K = 10,
  kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_S = 16, kQ5_K_M = 17,
  kQ6_K = 18, kIQ2_XXS = 19, kIQ2_XS = 20, kIQ3_XS = 22, kIQ3_XXS = 23, kIQ1_S = 24, kIQ4_NL = 25, kIQ3_S = 26,
  kIQ3_M = 27, kIQ2_S = 28, kIQ2_M = 29, kIQ4_XS = 30, kIQ1_M = 31, kBF16 = 32, kTQ1_0 = 36, kTQ2_0 = 37,
  kMXFP4_MOE = 38, kNVFP4 = 39, kQ1_0 = 40, kQ2_0 = 41,  // (the last three: no preset here; a file's guessed ftype)
};

// The 2-bit i-quant mixes, which llama.cpp gives rules of their own.
// The 1- and 2-bit i-quant presets, which share one branch of llama_tensor_get_type_impl.
bool is_very_low_bit(uint32_t ft) {
  return ft == kIQ2_XXS || ft == kIQ2_XS || ft == kIQ2_S || ft == kIQ2_M || ft == kIQ1_S || ft == kIQ1_M;
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

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
    if (contains_part(name, n)) return false;
  }
  return name != "position_embd.weight" && name != "token_types.weight";
}

// Tensor categories are the name table's quantize groups (core/model/tensor_names.h).
using Category = QuantGroup;
Category category_of(std::string_view name) { return quant_group_of(name); }

// llama.cpp's "use more bits" layers: the first and last eighth, and every third in between.
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

uint32_t gqa_of(const QuantModelFacts& f) { return f.n_head_kv > 0 ? f.n_head / f.n_head_kv : 0; }

// The IQ1_S / IQ1_M / IQ2_XXS / IQ2_XS / IQ2_S / IQ2_M rules (one branch of llama_tensor_get_type_impl,
// taken after token_embd's and before the per-category ones): Q2_K (IQ3_S for IQ2_S / IQ2_M) where
// the lowest bits hurt most. ffn_down's index is its layer's, as llama.cpp's ffn_down counter is
// with one ffn_down per layer.
DType very_low_bit_rules(uint32_t ft, const QuantModelFacts& f, Category cat, int i_layer, DType t) {
  const bool iq2_s_or_m = ft == kIQ2_S || ft == kIQ2_M;
  const DType more = iq2_s_or_m ? DType::IQ3_S : DType::Q2_K;
  switch (cat) {
    case Category::kAttnV: return gqa_of(f) >= 4 || f.n_expert >= 4 ? DType::Q4_K : more;
    case Category::kAttnK: return f.n_expert == 8 ? DType::Q4_K : t;
    case Category::kFfnDown: return i_layer < static_cast<int>(f.n_layer) / 8 ? more : t;
    case Category::kAttnOutput:
      if (f.n_expert == 8) return DType::Q5_K;
      if (ft == kIQ1_S || ft == kIQ1_M) return DType::IQ2_XXS;
      return iq2_s_or_m ? DType::IQ3_S : t;
    default: return t;
  }
}

// MXFP4_MOE: the experts' 3-D tensors (a third dimension over the experts) in MXFP4, every other
// quantized tensor in Q8_0. BailingMoE3's MLA projections are 3-D too: there only the FFN ones.
DType mxfp4_moe_type(const QuantModelFacts& f, Category cat, std::span<const uint64_t> dims) {
  const bool experts = dims.size() > 2 && dims[2] > 1;
  const bool ffn = cat == Category::kFfnUp || cat == Category::kFfnGate || cat == Category::kFfnDown;
  return experts && (f.arch != "bailingmoe3" || ffn) ? DType::MXFP4 : DType::Q8_0;
}

// The preset's rules for one quantized tensor (llama_tensor_get_type_impl, for the presets we offer).
// i_layer: the tensor's layer as llama.cpp's counters see it (QuantTypePlan).
DType apply_rules(const QuantPreset& p, const QuantModelFacts& f, const QuantTypeOptions& o, std::string_view name,
                  std::span<const uint64_t> dims, int i_layer, DType t) {
  const uint32_t ft = p.llama_ftype;
  const uint64_t nx = dims[0];
  const bool falcon = f.arch == "falcon";
  const uint32_t n_gqa = gqa_of(f);
  const bool is_70b = f.arch == "llama" && f.n_layer == 80 && f.n_head != f.n_head_kv;
  const Category cat = category_of(name);
  if (cat == Category::kOutput || (!f.has_output && cat == Category::kTokenEmbd)) {
    if (o.output_type.has_value()) return *o.output_type;  // tied embeddings take the output's type
    if (ft == kMXFP4_MOE || falcon || nx % dtype_facts(t).block_size != 0) return DType::Q8_0;
    if (is_very_low_bit(ft) || ft == kIQ3_XXS) return DType::Q5_K;
    return t != DType::Q8_0 ? DType::Q6_K : t;
  }
  if (ft == kMXFP4_MOE) return mxfp4_moe_type(f, cat, dims);
  if (cat == Category::kTokenEmbd) {
    if (ft == kIQ2_XXS || ft == kIQ2_XS || ft == kIQ1_S || ft == kIQ1_M) return DType::Q2_K;
    if (ft == kIQ2_S || ft == kIQ2_M || ft == kIQ3_XXS) return DType::IQ3_S;
    if (ft == kTQ1_0 || ft == kTQ2_0) return DType::Q4_K;
    return t;
  }
  const int n_layer = static_cast<int>(f.n_layer);
  if (is_very_low_bit(ft)) return very_low_bit_rules(ft, f, cat, i_layer, t);
  switch (cat) {
    case Category::kAttnV: {
      // i_attention_wv in llama.cpp counts attn_v tensors in layer order: the layer index.
      const int i = i_layer, n = static_cast<int>(f.n_attention_wv);
      if (ft == kQ2_K) t = n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
      else if (ft == kIQ3_XXS) t = n_gqa >= 4 ? DType::Q4_K : o.has_imatrix ? DType::IQ3_XXS : DType::IQ3_S;
      else if ((ft == kIQ3_XS || ft == kIQ3_S) && n_gqa >= 4) t = DType::Q4_K;
      else if (ft == kIQ3_M) t = DType::Q4_K;
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
      if (f.n_expert == 8) return DType::Q8_0;
      [[fallthrough]];
    case Category::kAttnQ:
      if (ft == kIQ3_XS) return DType::IQ3_XXS;
      return ft == kIQ3_XXS ? DType::IQ2_S : t;
    case Category::kFfnDown: {
      const int i = i_layer, n = n_layer;
      if (ft == kQ2_K) t = DType::Q3_K;
      else if (ft == kIQ3_XXS && !o.has_imatrix) t = i < n / 8 ? DType::Q4_K : DType::Q3_K;
      else if (ft == kQ3_K_M) t = i < n / 16 ? DType::Q5_K : (!falcon || use_more_bits(i, n)) ? DType::Q4_K : DType::Q3_K;
      else if (ft == kIQ3_M && (i < n / 8 || (f.n_expert == 8 && use_more_bits(i, n)))) t = DType::Q4_K;
      else if (ft == kQ3_K_L) t = falcon ? DType::Q4_K : DType::Q5_K;
      else if (ft == kQ4_K_M) {
        if (falcon) t = i < n / 16 ? DType::Q6_K : use_more_bits(i, n) ? DType::Q5_K : DType::Q4_K;
        else if (use_more_bits(i, n)) t = DType::Q6_K;
      } else if (i < n / 8 && (ft == kIQ4_NL || ft == kIQ4_XS) && !o.has_imatrix) t = DType::Q5_K;
      else if (ft == kQ5_K_M && use_more_bits(i, n)) t = DType::Q6_K;
      else if (ft == kQ4_K_S && !falcon && i < n / 8) t = DType::Q5_K;
      // With an imatrix the first eighth of Q4_0/Q5_0's ffn_down gets the _1 variant (llama.cpp
      // guards against "craziness" there; without one it keeps the old choice).
      else if ((ft == kQ4_0 || ft == kQ5_0) && o.has_imatrix && i < n / 8) t = ft == kQ4_0 ? DType::Q4_1 : DType::Q5_1;
      return t;
    }
    case Category::kAttnOutput:
      if (falcon) return ft == kQ3_K_L ? DType::Q4_K : t;
      if (f.n_expert == 8) {
        const bool bump = ft == kQ2_K || ft == kIQ3_XS || ft == kIQ3_XXS || ft == kQ3_K_S || ft == kQ3_K_M ||
                          ft == kIQ4_NL || ft == kQ4_K_S || ft == kQ4_K_M || ft == kIQ3_S || ft == kIQ3_M ||
                          ft == kIQ4_XS;
        return bump ? DType::Q5_K : t;
      }
      if (ft == kQ2_K) return DType::Q3_K;
      if (ft == kIQ3_XXS) return DType::IQ3_S;
      if (ft == kQ3_K_M || ft == kIQ3_M) return DType::Q4_K;
      if (ft == kQ3_K_L) return DType::Q5_K;
      return t;
    case Category::kFfnUp:
    case Category::kFfnGate:
      // IQ3_XS: IQ3_XXS in the middle three quarters of the layers.
      return ft == kIQ3_XS && i_layer >= n_layer / 8 && i_layer < 7 * n_layer / 8 ? DType::IQ3_XXS : t;
    default:
      return t;
  }
}

// llama.cpp's fallback when the row length is not a multiple of the chosen type's block: the
// registry's row_fallback (a 32-block type for the 256-block ones), F16 when even that does not
// fit. For the 32-block types themselves that is F16 (stories260K's ffn_down rows of 172 under
// Q4_0, say), as llama.cpp does.
DType fallback_for_row(uint64_t nx, DType t) {
  if (nx % dtype_facts(t).block_size == 0) return t;
  const DType f = format(t).row_fallback;
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
      {"IQ4_XS", DType::IQ4_XS, kIQ4_XS},  {"IQ2_XXS", DType::IQ2_XXS, kIQ2_XXS}, {"IQ2_XS", DType::IQ2_XS, kIQ2_XS},
      {"IQ2_S", DType::IQ2_XS, kIQ2_S},    {"IQ2_M", DType::IQ2_S, kIQ2_M},
      {"TQ1_0", DType::TQ1_0, kTQ1_0},     {"TQ2_0", DType::TQ2_0, kTQ2_0},       {"MXFP4_MOE", DType::MXFP4, kMXFP4_MOE},
      {"IQ3_XXS", DType::IQ3_XXS, kIQ3_XXS}, {"IQ3_XS", DType::IQ3_S, kIQ3_XS},
      {"IQ3_S", DType::IQ3_S, kIQ3_S},     {"IQ3_M", DType::IQ3_S, kIQ3_M},       {"IQ1_S", DType::IQ1_S, kIQ1_S},
      {"IQ1_M", DType::IQ1_M, kIQ1_M},
      // After F32, so that ftype 0 names F32 (llama-quantize's order).
      {"COPY", DType::F32, kAllF32, /*only_copy=*/true},
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

uint32_t llama_ftype_guessed_from(DType most_common) {
  switch (most_common) {  // llama_model_loader's table
    case DType::F16: return kF16;
    case DType::BF16: return kBF16;
    case DType::Q4_0: return kQ4_0;
    case DType::Q4_1: return kQ4_1;
    case DType::Q5_0: return kQ5_0;
    case DType::Q5_1: return kQ5_1;
    case DType::Q8_0: return kQ8_0;
    case DType::Q2_K: return kQ2_K;
    case DType::Q3_K: return kQ3_K_M;
    case DType::Q4_K: return kQ4_K_M;
    case DType::Q5_K: return kQ5_K_M;
    case DType::Q6_K: return kQ6_K;
    case DType::TQ1_0: return kTQ1_0;
    case DType::TQ2_0: return kTQ2_0;
    case DType::IQ2_XXS: return kIQ2_XXS;
    case DType::IQ2_XS: return kIQ2_XS;
    case DType::IQ2_S: return kIQ2_S;
    case DType::IQ3_XXS: return kIQ3_XXS;
    case DType::IQ1_S: return kIQ1_S;
    case DType::IQ1_M: return kIQ1_M;
    case DType::IQ4_NL: return kIQ4_NL;
    case DType::IQ4_XS: return kIQ4_XS;
    case DType::IQ3_S: return kIQ3_S;
    case DType::NVFP4: return kNVFP4;
    case DType::Q1_0: return kQ1_0;
    case DType::Q2_0: return kQ2_0;
    default: return kAllF32;
  }
}

Result<QuantTypePlan> QuantTypePlan::create(const QuantPreset& preset, const QuantModelFacts& facts,
                                            const QuantTypeOptions& options) {
  QuantTypePlan plan(preset, facts, options);
  for (const TensorTypeOverride& o : options.tensor_types) {
    OX_ASSIGN_OR_RETURN(TensorPattern p, TensorPattern::compile(o.pattern));
    plan.patterns_.push_back(std::move(p));
  }
  return plan;
}

QuantTypePlan::Choice QuantTypePlan::next(std::string_view name, std::span<const uint64_t> dims, DType current) {
  const QuantTypeOptions& o = options_;
  if (preset_->only_copy || !allows_quantization(name, dims)) return {current, false};
  if (!o.quantize_output && name == "output.weight") return {current, false};
  // llama_tensor_get_type: the explicit types first, as given (no fallback), even under --pure;
  // per_layer_token_embd is a table of its own, which a --tensor-type pattern may name instead.
  const Category cat = category_of(name);
  auto named = [&] {
    for (size_t i = 0; i < patterns_.size(); ++i) {
      if (patterns_[i].matches(name)) return static_cast<int>(i);
    }
    return -1;
  };
  if (o.token_embd_type.has_value() && cat == Category::kTokenEmbd &&
      !(name == "per_layer_token_embd.weight" && named() >= 0)) {
    return {*o.token_embd_type, false};
  }
  if (o.output_type.has_value() && cat == Category::kOutput) return {*o.output_type, false};
  if (!is_quantized(preset_->default_type)) return {preset_->default_type, false};
  // llama.cpp counts attn_v tensors always, and the dense ffn ones (a MoE model's layer comes from
  // the name); a named tensor is not counted.
  uint32_t* manual_before = nullptr;
  if (cat == Category::kAttnV) manual_before = &manual_attn_v_;
  if (facts_.n_expert <= 1) {
    if (cat == Category::kFfnDown) manual_before = &manual_ffn_down_;
    if (cat == Category::kFfnGate) manual_before = &manual_ffn_gate_;
    if (cat == Category::kFfnUp) manual_before = &manual_ffn_up_;
  }
  DType t = preset_->default_type;
  const int pattern = named();
  if (pattern >= 0) {
    t = o.tensor_types[static_cast<size_t>(pattern)].type;
    if (manual_before != nullptr) ++*manual_before;
  } else if (!o.pure) {
    const int i_layer = layer_of(name) - static_cast<int>(manual_before != nullptr ? *manual_before : 0);
    t = apply_rules(*preset_, facts_, o, name, dims, i_layer, t);
  }
  return {fallback_for_row(dims[0], t), pattern >= 0};
}

DType quant_tensor_type(const QuantPreset& preset, const QuantModelFacts& facts, std::string_view name,
                        std::span<const uint64_t> dims, DType current, const QuantTypeOptions& options) {
  Result<QuantTypePlan> plan = QuantTypePlan::create(preset, facts, options);
  return plan.value().next(name, dims, current).type;
}

bool quant_needs_importance(std::string_view name, DType type) {
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight" || name == "output.weight") return false;
  switch (type) {
    case DType::IQ1_S:
    case DType::IQ1_M:
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS: return true;
    default: return false;
  }
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

}  // namespace

Result<QuantModelFacts> read_quant_model_facts(const gguf::GgufFile& f) {
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

}  // namespace ox
