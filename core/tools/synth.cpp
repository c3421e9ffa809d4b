// synth_gguf: writes a GGUF of any registered architecture with seeded random weights, its tensors
// named and shaped by the architecture's tensor plan (core/model/tensor_plan.h, the loader's own
// list), tensor types chosen by the same preset rules as quantize_gguf.
#include "core/tools/synth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/model/arch_registry.h"
#include "core/model/tensor_plan.h"
#include "core/quant/traits.h"
#include "core/tools/quantize.h"

namespace ox {
namespace {

struct Shape {
  const char* name;
  uint32_t n_embd, n_ff, n_layer, n_head, n_head_kv;
  float rope_base, rms_eps;
  // The architecture the shape is of (nullptr: llama, or --arch's tiny parity model) and, with one,
  // its keys in place of the architecture's parity-model synth keys.
  const char* arch = nullptr;
  SynthKey keys[8] = {};
};

// Hyper-parameters as the models they imitate publish them (llama2.c stories15M, Qwen2.5-0.5B,
// Llama-3.2-1B), and tiny-256: the smallest llama whose rows all take the K-quants' 256-element
// blocks (the browser tests load it as Q4_K_M, whose weights the relaxed-SIMD module converts).
constexpr Shape kShapes[] = {
    {"tiny-256", 256, 512, 2, 4, 2, 10000.0f, 1e-5f},
    {"tiny-arch", 256, 512, 2, 4, 2, 10000.0f, 1e-5f},  // the parity models of every architecture
    {"tiny-15M", 288, 768, 6, 6, 6, 10000.0f, 1e-5f},
    {"0.5B", 896, 4864, 24, 14, 2, 1000000.0f, 1e-6f},
    {"1B", 2048, 8192, 16, 32, 8, 500000.0f, 1e-5f},
    {"bge-small", 384, 1536, 12, 12, 12, 10000.0f, 1e-12f},  // BAAI/bge-small-en-v1.5 (33M, with --arch bert)
    {"bge-base", 768, 3072, 12, 12, 12, 10000.0f, 1e-12f},   // BAAI/bge-base-en-v1.5 (110M, with --arch bert)
    // Qwen3-30B-A3B's attention (32 heads of 128 over 4 KV heads, width 2048) with 16 of its 48
    // layers, 64 of its 128 experts (8 active) and experts 256 wide instead of 768: ~1.2 GB at
    // Q4_K_M, ~0.27 GB of weights read per decoded token.
    {"moe-16x64", 2048, 6144, 16, 32, 4, 1000000.0f, 1e-6f, "qwen3moe",
     {{"attention.key_length", SynthKey::kU32, 128},
      {"attention.value_length", SynthKey::kU32, 128},
      {"rope.dimension_count", SynthKey::kU32, 128},
      {"expert_count", SynthKey::kU32, 64},
      {"expert_used_count", SynthKey::kU32, 8},
      {"expert_feed_forward_length", SynthKey::kU32, 256}}},
    // LiquidAI LFM2-1.2B: 10 short-convolution and 6 attention layers (32 heads / 8 KV), SwiGLU 8192.
    {"lfm2-1.2B", 2048, 8192, 16, 32, 8, 1000000.0f, 1e-5f, "lfm2",
     {{"attention.head_count_kv", SynthKey::kU32Layers, 0, "0,0,8,0,0,8,0,0,8,0,8,0,8,0,8,0"},
      {"shortconv.l_cache", SynthKey::kU32, 3}}},
};

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r of tensor t: its own generator state, so the bytes do not depend on the thread split.
void fill_gaussian_row(uint64_t seed, uint64_t tensor, uint64_t row, float std_dev, float* out, int64_t n) {
  uint64_t state = seed;
  state = splitmix64(&state) ^ (tensor * 0xD1B54A32D192ED03ull);
  state = splitmix64(&state) ^ (row * 0x8CB92BA72F3D8DD7ull);
  for (int64_t i = 0; i < n; i += 2) {
    // Box-Muller on two uniforms in (0, 1].
    const double u1 = static_cast<double>((splitmix64(&state) >> 11) + 1) * 0x1p-53;
    const double u2 = static_cast<double>(splitmix64(&state) >> 11) * 0x1p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)) * std_dev;
    out[i] = static_cast<float>(r * std::cos(6.283185307179586 * u2));
    if (i + 1 < n) out[i + 1] = static_cast<float>(r * std::sin(6.283185307179586 * u2));
  }
}

// How a tensor's values are drawn: matrices N(0, weight_std^2); norm weights 1 (or 1 + N(0, 0.1^2) with
// every feature on, so a missing norm multiply shows); biases N(0, 0.05^2); rope_freqs in [1, 8);
// T5's relative position bias N(0, 1), the size of the scores it joins (a wrong bucket shows).
enum class Fill { kMatrix, kNorm, kBias, kRopeFreqs, kRelBias };

struct SynthTensor {
  std::string name;
  std::vector<uint64_t> dims;
  Fill fill;
  DType type = DType::F32;
};

std::vector<SynthTensor> tensor_list(const ArchSpec& spec, const HParams& hp, bool all_features) {
  std::vector<SynthTensor> t;
  for (const PlannedTensor& p : plan_tensors(spec, hp)) {
    // Without all_features, the benchmark models: untied output (as the Llamas they imitate), nothing
    // else optional.
    if (p.presence == Has::kOptional && !all_features && !(p.role == Tn::kOutput && !p.bias)) continue;
    std::vector<uint64_t> dims(p.dims.begin(), p.dims.end());
    const Fill fill = p.bias ? Fill::kBias
                      : p.role == Tn::kRopeFreqs ? Fill::kRopeFreqs
                      : p.role == Tn::kFfnGateInpShexp ? Fill::kMatrix  // a 1-D dot product, not a norm
                      : p.role == Tn::kEncAttnRelB ? Fill::kRelBias
                      : p.vector() || p.role == Tn::kSsmNorm ? Fill::kNorm : Fill::kMatrix;
    t.push_back({p.name(), std::move(dims), fill});
  }
  return t;
}

// Generates tensor `index` and converts it to its type, rows split over threads.
void generate_tensor(const SynthTensor& t, uint64_t seed, float std_dev, float norm_std, uint64_t index,
                     int n_threads, std::vector<uint8_t>* out) {
  const int64_t n_per_row = static_cast<int64_t>(t.dims[0]);
  int64_t n_rows = 1;  // every dimension after the first: experts' matrices, RWKV's {n, 1, 1, 6}
  for (size_t i = 1; i < t.dims.size(); ++i) n_rows *= static_cast<int64_t>(t.dims[i]);
  const uint64_t row_bytes = dtype_row_bytes(t.type, t.dims[0]);
  out->resize(row_bytes * static_cast<uint64_t>(n_rows));
  auto work = [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(n_per_row));
    for (int64_t r = r0; r < r1; ++r) {
      switch (t.fill) {
        case Fill::kMatrix: fill_gaussian_row(seed, index, static_cast<uint64_t>(r), std_dev, row.data(), n_per_row); break;
        case Fill::kBias: fill_gaussian_row(seed, index, static_cast<uint64_t>(r), 0.05f, row.data(), n_per_row); break;
        case Fill::kRelBias: fill_gaussian_row(seed, index, static_cast<uint64_t>(r), 1.0f, row.data(), n_per_row); break;
        case Fill::kNorm:
          fill_gaussian_row(seed, index, static_cast<uint64_t>(r), norm_std, row.data(), n_per_row);
          for (float& v : row) v += 1.0f;
          break;
        case Fill::kRopeFreqs:
          fill_gaussian_row(seed, index, static_cast<uint64_t>(r), 1.0f, row.data(), n_per_row);
          for (float& v : row) v = 1.0f + std::min(7.0f, 2.0f * std::fabs(v));
          break;
      }
      quantize_rows_uniform(t.type, row.data(), out->data() + static_cast<uint64_t>(r) * row_bytes, 1, n_per_row);
    }
  };
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  n_threads = 1;
#endif
  const int64_t n_workers = std::max<int64_t>(1, std::min<int64_t>(n_threads, n_rows));
  std::vector<std::thread> threads;
  for (int64_t w = 1; w < n_workers; ++w) threads.emplace_back(work, n_rows * w / n_workers, n_rows * (w + 1) / n_workers);
  work(0, n_rows / n_workers);
  for (std::thread& th : threads) th.join();
}

// "yes,no" -> {"yes", "no"} (a kStrList key's text).
std::vector<std::string> comma_list(const char* text) {
  std::vector<std::string> out;
  for (std::string_view rest = text != nullptr ? text : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    out.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

// The values of a kU32Layers key for n_layer layers.
std::vector<uint32_t> layer_values(const SynthKey& k, uint32_t n_layer) {
  std::vector<uint32_t> list;
  for (const char* p = k.text; p != nullptr && *p != '\0';) {
    char* end = nullptr;
    list.push_back(static_cast<uint32_t>(std::strtoul(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
  }
  if (list.empty()) list.push_back(static_cast<uint32_t>(k.value));
  std::vector<uint32_t> out(n_layer);
  for (uint32_t l = 0; l < n_layer; ++l) out[l] = list[l % list.size()];
  return out;
}

// The hyperparameters the file will declare: the shape's, then the architecture's synth keys.
HParams synth_hparams(const Shape& s, const ArchDef& arch, std::span<const SynthKey> keys, uint32_t n_layer,
                      uint64_t n_vocab, uint32_t n_ctx) {
  HParams hp;
  hp.arch = arch.name;
  hp.n_vocab = static_cast<int>(n_vocab);
  hp.n_ctx_train = static_cast<int>(n_ctx);
  hp.n_embd = static_cast<int>(s.n_embd);
  hp.n_layer = static_cast<int>(n_layer);
  hp.n_ff = static_cast<int>(s.n_ff);
  hp.n_head = static_cast<int>(s.n_head);
  hp.n_head_kv = static_cast<int>(s.n_head_kv);
  hp.head_dim_k = hp.head_dim_v = hp.n_rot = hp.n_embd / hp.n_head;
  for (const SynthKey& k : keys) {
    const std::string_view key = k.key;
    const int v = static_cast<int>(k.value);
    if (k.type == SynthKey::kU32Layers && key == "attention.head_count_kv") {  // a hybrid's layer pattern
      const std::vector<uint32_t> kv = layer_values(k, n_layer);
      hp.n_head_kv = static_cast<int>(*std::max_element(kv.begin(), kv.end()));
      if (hp.n_head_kv == 0) hp.n_head_kv = hp.n_head;  // as read_hparams: no layer attends
      hp.kv_free_layer.resize(n_layer);
      for (uint32_t l = 0; l < n_layer; ++l) hp.kv_free_layer[l] = kv[l] == 0;
      hp.n_head_kv_layer.assign(kv.begin(), kv.end());
    }
    if (k.type == SynthKey::kU32Layers && key == "feed_forward_length") {  // per-layer widths (gemma4)
      const std::vector<uint32_t> ff = layer_values(k, n_layer);
      hp.n_ff_layer.assign(ff.begin(), ff.end());
      hp.n_ff = static_cast<int>(*std::max_element(ff.begin(), ff.end()));
    }
    if (k.type == SynthKey::kU32Layers && key == "attention.sliding_window_pattern") {  // a flag per layer
      for (uint32_t flag : layer_values(k, n_layer)) hp.swa_layers.push_back(flag != 0);
    }
    if (key == "attention.key_length") hp.head_dim_k = v;
    if (key == "attention.value_length") hp.head_dim_v = v;
    if (key == "rope.dimension_count") hp.n_rot = v;
    if (key == "attention.key_length_swa") hp.head_dim_k_swa = v;
    if (key == "attention.value_length_swa") hp.head_dim_v_swa = v;
    if (key == "rope.dimension_count_swa") hp.n_rot_swa = v;
    if (key == "embedding_length_per_layer_input") hp.n_embd_per_layer = v;
    if (key == "attention.shared_kv_layers") hp.n_kv_shared_layers = v;
    if (key == "expert_count") hp.n_expert = v;
    if (key == "expert_used_count") hp.n_expert_used = v;
    // state-space layers
    if (key == "ssm.conv_kernel") hp.ssm_d_conv = v;
    if (key == "ssm.inner_size") hp.ssm_d_inner = v;
    if (key == "ssm.state_size") hp.ssm_d_state = v;
    if (key == "ssm.time_step_rank") hp.ssm_dt_rank = v;
    if (key == "ssm.group_count") hp.ssm_n_group = v;
    if (key == "shortconv.l_cache") hp.shortconv_l_cache = v;
    if (key == "wkv.head_size") hp.wkv_head_size = v;
    if (key == "full_attention_interval") hp.full_attention_interval = v;
    if (key == "attention.decay_lora_rank") hp.n_lora_decay = v;
    if (key == "attention.iclr_lora_rank") hp.n_lora_iclr = v;
    if (key == "attention.value_residual_mix_lora_rank") hp.n_lora_value_res_mix = v;
    if (key == "attention.gate_lora_rank") hp.n_lora_gate = v;
    if (key == "attention.q_lora_rank") hp.n_lora_q = v;  // multi-head latent attention (deepseek2)
    if (key == "attention.kv_lora_rank") hp.n_lora_kv = v;
    if (key == "attention.key_length_mla") hp.head_dim_k_mla = v;
    if (key == "attention.value_length_mla") hp.head_dim_v_mla = v;
    if (key == "attention.head_count_kv" && k.type == SynthKey::kU32) hp.n_head_kv = v;
    // Mixture-of-experts shapes (moe.h)
    if (key == "expert_feed_forward_length") hp.n_ff_exp = v;
    if (key == "expert_shared_feed_forward_length") hp.n_ff_shexp = v;
    if (key == "expert_shared_count") hp.n_expert_shared = v;
    if (key == "leading_dense_block_count") hp.n_layer_dense_lead = v;
    if (key == "expert_group_count") hp.n_expert_groups = v;
    if (key == "expert_group_used_count") hp.n_group_used = v;
    if (key == "interleave_moe_layer_step") hp.n_moe_layer_step = v;
    if (key == "moe_every_n_layers") hp.n_moe_every = v;
    if (key == "nextn_predict_layers") hp.n_layer_nextn = v;  // blocks after the n_layer of the trunk
    if (key == "classifier.output_labels") hp.n_cls_out = static_cast<int>(comma_list(k.text).size());
  }
  // The window layers' heads: the global layers' unless a key says otherwise (as read_hparams).
  if (hp.head_dim_k_swa == 0) hp.head_dim_k_swa = hp.head_dim_k;
  if (hp.head_dim_v_swa == 0) hp.head_dim_v_swa = hp.head_dim_v;
  if (hp.n_rot_swa == 0) hp.n_rot_swa = hp.n_rot;
  if (arch.fix_hparams != nullptr) arch.fix_hparams(hp);  // as the loader will read the file
  return hp;
}

// A tokenizer key of a vocabulary of n_source tokens cut to its first n_vocab: the per-token arrays
// cut, a special token id past the cut left out (nullopt; an id the source had as "none", past its
// own end, stays), anything else as it is.
std::optional<gguf::Value> cut_vocab_key(std::string_view key, const gguf::Value& value, uint64_t n_source,
                                         uint64_t n_vocab) {
  gguf::Value v = value;
  if (n_vocab == n_source) return v;
  const bool per_token = key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.scores" ||
                         key == "tokenizer.ggml.token_type";
  if (per_token && v.type == gguf::ValueType::ARRAY && v.count > n_vocab) {
    v.count = n_vocab;
    if (!v.strings.empty()) v.strings.resize(static_cast<size_t>(n_vocab));
  }
  constexpr std::string_view kIdSuffix = "_token_id";
  const bool token_id = key.size() > kIdSuffix.size() && key.substr(key.size() - kIdSuffix.size()) == kIdSuffix;
  // An id is held in u (unsigned types) or i (signed ones); the other field stays 0.
  const uint64_t id = v.i > 0 ? static_cast<uint64_t>(v.i) : v.u;
  const bool past_cut = id >= n_vocab && id < n_source;
  if (token_id && v.is_integer() && past_cut) return std::nullopt;
  return v;
}

bool has_synth_key(std::span<const SynthKey> keys, std::string_view key) {
  for (const SynthKey& k : keys) {
    if (key == k.key) return true;
  }
  return false;
}

// The architecture's synth keys under `variant` ("": the default), as SynthKey::variant selects them;
// an error naming the variant if no key mentions it.
Result<std::vector<SynthKey>> variant_keys(const ArchDef& arch, const std::string& variant) {
  std::vector<SynthKey> keys;
  bool known = variant.empty();
  for (const SynthKey& k : arch.synth_keys) {
    if (k.key == nullptr) break;
    const std::string_view v = k.variant != nullptr ? k.variant : "";
    const bool negated = !v.empty() && v[0] == '!';
    const std::string_view name = negated ? v.substr(1) : v;
    known = known || (!name.empty() && name == variant);
    if (v.empty() || (negated ? name != variant : name == variant)) keys.push_back(k);
  }
  if (!known) {
    return error(ErrorCode::kInvalidArgument, strfmt("synth: architecture '%s' has no variant '%s'", arch.name,
                                                     variant.c_str()));
  }
  return keys;
}

// The layouts llama.cpp tells apart by tensor names rather than keys (file_layout.h): `--variant
// fused_qkv` writes attn_qkv where the architecture's files may hold either q/k/v layout, and
// `fused_gate_up_exps` the experts' ffn_gate_up_exps where theirs may (convert_hf_to_gguf.py's
// --fuse-qkv, --fuse-gate-up-exps). Whether `variant` is one of them for `arch`, setting it in spec.
bool layout_variant(const ArchDef& arch, const std::string& variant, ArchSpec& spec) {
  if (variant == "fused_qkv" && arch.spec.qkv_either && !arch.spec.fused_qkv) {
    spec.fused_qkv = true;
    return true;
  }
  if (variant == "fused_gate_up_exps" && arch.spec.moe && arch.spec.experts.gate_up_either) {
    spec.experts.fused_gate_up = true;
    return true;
  }
  return false;
}

Status add_header(gguf::GgufWriter& w, const Shape& s, const ArchDef& arch, std::span<const SynthKey> keys,
                  const HParams& hp, const QuantPreset& preset) {
  const std::string p = std::string(arch.name) + ".";
  OX_TRY(w.add_string("general.architecture", arch.name));
  OX_TRY(w.add_string("general.name", std::string("oxidize synthetic ") + s.name));
  OX_TRY(w.add_u32(p + "context_length", static_cast<uint32_t>(hp.n_ctx_train)));
  OX_TRY(w.add_u32(p + "embedding_length", s.n_embd));
  const uint32_t n_block = static_cast<uint32_t>(hp.n_layer + hp.n_layer_nextn);  // multi-token-prediction blocks too
  OX_TRY(w.add_u32(p + "block_count", n_block));
  if (!has_synth_key(keys, "feed_forward_length")) OX_TRY(w.add_u32(p + "feed_forward_length", s.n_ff));
  OX_TRY(w.add_u32(p + "attention.head_count", s.n_head));
  if (!has_synth_key(keys, "attention.head_count_kv")) OX_TRY(w.add_u32(p + "attention.head_count_kv", s.n_head_kv));
  if (!has_synth_key(keys, "rope.dimension_count")) OX_TRY(w.add_u32(p + "rope.dimension_count", s.n_embd / s.n_head));
  if (arch.spec.norm == NormKind::kRms) {
    OX_TRY(w.add_f32(p + "attention.layer_norm_rms_epsilon", s.rms_eps));
  } else {
    OX_TRY(w.add_f32(p + "attention.layer_norm_epsilon", s.rms_eps));
  }
  if (!has_synth_key(keys, "rope.freq_base")) OX_TRY(w.add_f32(p + "rope.freq_base", s.rope_base));
  for (const SynthKey& k : keys) {
    if (std::string_view(k.key) == "block_count") continue;  // written above, from hp
    const std::string key = (k.global ? "" : p) + k.key;
    switch (k.type) {
      case SynthKey::kU32: OX_TRY(w.add_u32(key, static_cast<uint32_t>(k.value))); break;
      case SynthKey::kF32: OX_TRY(w.add_f32(key, static_cast<float>(k.value))); break;
      case SynthKey::kBool: OX_TRY(w.add_bool(key, k.value != 0)); break;
      case SynthKey::kStr: OX_TRY(w.add_string(key, k.text)); break;
      case SynthKey::kStrList: OX_TRY(w.add_string_array(key, comma_list(k.text))); break;
      case SynthKey::kU32List: {
        std::vector<uint32_t> v;
        for (const char* q = k.text; q != nullptr && *q != '\0';) {
          char* end = nullptr;
          v.push_back(static_cast<uint32_t>(std::strtoul(q, &end, 10)));
          q = *end == ',' ? end + 1 : end;
        }
        OX_TRY(w.add_array<uint32_t>(key, v));
        break;
      }
      case SynthKey::kU32Layers: {
        const std::vector<uint32_t> v = layer_values(k, n_block);
        OX_TRY(w.add_array<uint32_t>(key, v));
        break;
      }
    }
  }
  OX_TRY(w.add_u32(p + "vocab_size", static_cast<uint32_t>(hp.n_vocab)));
  OX_TRY(w.add_u32("general.file_type", preset.llama_ftype));
  OX_TRY(w.add_u32("general.quantization_version", 2));
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& synth_shape_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Shape& s : kShapes) v.push_back(s.name);
    return v;
  }();
  return names;
}

std::string default_synth_vocab_path() {
  const char* env = std::getenv("OXIDIZE_SHARED");
  const std::string shared = env != nullptr && *env != '\0' ? std::string(env) : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
  return shared + "/vocab/ggml-vocab-llama-spm.gguf";
}

Status synth_gguf(const SynthOptions& o) {
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes) {
    if (o.shape == s.name) shape = &s;
  }
  if (shape == nullptr) {
    std::string known;
    for (const Shape& s : kShapes) known += (known.empty() ? "" : ", ") + std::string(s.name);
    return error(ErrorCode::kInvalidArgument,
                 strfmt("synth: unknown shape '%s' (known: %s)", o.shape.c_str(), known.c_str()));
  }
  const QuantPreset* preset = find_quant_preset(o.type);
  if (preset == nullptr || preset->only_copy) {
    return error(ErrorCode::kInvalidArgument, strfmt("synth: unknown weight type '%s'", o.type.c_str()));
  }
  if (o.out_path.empty()) return error(ErrorCode::kInvalidArgument, "synth: no output path");
  int n_threads = o.n_threads > 0 ? o.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  const std::string vocab_path = o.vocab_path.empty() ? default_synth_vocab_path() : o.vocab_path;
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> vocab, gguf::GgufFile::open(vocab_path));
  OX_ASSIGN_OR_RETURN(const std::vector<std::string_view>* tokens, vocab->get_string_array("tokenizer.ggml.tokens"));
  const uint64_t n_source = tokens->size();
  uint64_t n_vocab = n_source;
  if (n_vocab == 0) return error(ErrorCode::kInvalidFile, strfmt("%s: empty tokenizer.ggml.tokens", vocab_path.c_str()));
  if (o.vocab_size > 0) {
    if (o.vocab_size > n_vocab) {
      return error(ErrorCode::kInvalidArgument, strfmt("synth: --vocab-size %u: %s has only %llu tokens", o.vocab_size,
                                                       vocab_path.c_str(), static_cast<unsigned long long>(n_vocab)));
    }
    if (vocab->find("tokenizer.ggml.merges") != nullptr) {
      return error(ErrorCode::kInvalidArgument, strfmt("synth: --vocab-size cannot cut %s: a BPE vocabulary's merges "
                                                       "name its tokens", vocab_path.c_str()));
    }
    n_vocab = o.vocab_size;
  }

  // No --arch: the benchmark models of the shape's architecture (llama unless the shape names one; no
  // optional tensors, norms exactly 1). With one: a parity model with every optional feature of the
  // architecture switched on.
  if (shape->arch != nullptr && !o.arch.empty()) {
    return error(ErrorCode::kInvalidArgument, strfmt("synth: --arch %s: shape '%s' is a %s model (leave --arch out)",
                                                     o.arch.c_str(), shape->name, shape->arch));
  }
  const bool all_features = !o.arch.empty();
  const ArchDef* arch = find_arch(all_features ? o.arch : shape->arch != nullptr ? shape->arch : "llama");
  if (arch == nullptr) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("synth: unknown architecture '%s' (known: %s)", o.arch.c_str(), arch_names().c_str()));
  }
  // Layers: --layers, else the architecture's block_count synth key (a layer pattern that needs more
  // than the shape's two: smollm3's NoPE layer is every fourth), else the shape's.
  std::vector<SynthKey> keys;
  if (shape->arch != nullptr) {
    if (!o.variant.empty()) {
      return error(ErrorCode::kInvalidArgument, strfmt("synth: --variant needs --arch (shape '%s' has no variants)", shape->name));
    }
    for (const SynthKey& k : shape->keys) {
      if (k.key != nullptr) keys.push_back(k);
    }
  }
  ArchSpec spec = arch->spec;
  if (shape->arch == nullptr) {
    const bool layout = layout_variant(*arch, o.variant, spec);
    OX_ASSIGN_OR_RETURN(keys, variant_keys(*arch, layout ? std::string() : o.variant));
  }
  uint32_t n_layer = shape->n_layer;
  for (const SynthKey& k : keys) {
    if (std::string_view(k.key) == "block_count") n_layer = static_cast<uint32_t>(k.value);
  }
  if (o.n_layer != 0) n_layer = o.n_layer;
  HParams hp = synth_hparams(*shape, *arch, keys, n_layer, n_vocab, o.n_ctx);
  if (arch->spec.token_types != Has::kNo) {  // the vocabulary's token types (bert's: 2), each with a row
    OX_ASSIGN_OR_RETURN(const uint32_t n_types, vocab->get_u32_or("tokenizer.ggml.token_type_count", 0));
    hp.n_token_types = static_cast<int>(n_types);
  }
  gguf::GgufWriter w;
  OX_TRY(add_header(w, *shape, *arch, keys, hp, *preset));
  for (const auto& [key, value] : vocab->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const std::optional<gguf::Value> kept = cut_vocab_key(key, value, n_source, n_vocab);
    if (kept.has_value()) OX_TRY(w.add(key, gguf::encode_value(*kept)).with_context(vocab_path));
  }

  std::vector<SynthTensor> tensors = tensor_list(spec, hp, all_features);
  QuantModelFacts facts;
  facts.arch = arch->name;
  facts.n_layer = static_cast<uint32_t>(hp.n_layer + hp.n_layer_nextn);  // block_count, as quantize reads it
  facts.n_head = shape->n_head;
  facts.n_head_kv = shape->n_head_kv;
  facts.n_expert = static_cast<uint32_t>(hp.n_expert);
  facts.has_output = false;
  for (const SynthTensor& t : tensors) {
    if (t.name == "output.weight") facts.has_output = true;
    if (quant_group_of(t.name) == QuantGroup::kAttnV) ++facts.n_attention_wv;
  }
  for (SynthTensor& t : tensors) {
    t.type = t.fill == Fill::kMatrix ? quant_tensor_type(*preset, facts, t.name, t.dims, DType::F32) : DType::F32;
    const QuantTraits& q = quant_traits(t.type);
    if (q.from_float_ref == nullptr && q.quantize_rows == nullptr) {
      return error(ErrorCode::kUnsupported, strfmt("synth: %s gives tensor '%s' type %s, which this engine cannot "
                                                   "quantize to", preset->name, t.name.c_str(), dtype_name(t.type)));
    }
    OX_TRY(w.declare_tensor(t.name, t.dims, t.type));
  }

  FILE* f = std::fopen(o.out_path.c_str(), "wb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("synth: cannot create %s", o.out_path.c_str()));
  Status st = w.begin(f);
  std::vector<uint8_t> data;
  for (size_t i = 0; i < tensors.size() && st.is_ok(); ++i) {
    generate_tensor(tensors[i], o.seed, o.weight_std, all_features ? 0.1f : 0.0f, i, n_threads, &data);
    st = w.write_tensor_data(tensors[i].name, data);
  }
  if (st.is_ok()) st = w.finish();
  if (std::fclose(f) != 0 && st.is_ok()) st = error(ErrorCode::kIo, strfmt("synth: closing %s failed", o.out_path.c_str()));
  if (!st.is_ok()) {
    std::remove(o.out_path.c_str());
    return st.with_context(o.out_path);
  }
  return Status::ok();
}

}  // namespace ox
