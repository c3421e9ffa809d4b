// Gemma 3n (llama.cpp's src/models/gemma3n.cpp): Gemma 3's block inside AltUp (four residual
// streams, one of them active, predicted and corrected per layer), LAuReL's low-rank residual
// beside attention, V heads RMS-normalised, attention unscaled, activation sparsity on the first
// feed-forwards, per-layer token inputs, K/V reused from layer 20 on, a final soft-cap of 30
// (forward_gemma3n.cpp). llama.cpp fixes AltUp's width, the LAuReL rank, the per-layer input
// width, the sparse layers and the first reusing layer rather than reading them: files that say
// otherwise are refused by name.
#include <algorithm>
#include <cmath>

#include "core/model/arch_registry.h"
#include "core/model/forward_gemma.h"
#include "core/model/gemma3n.h"
#include "core/model/tensor_plan.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  const char* name = file.name().c_str();
  const std::string p = hp.arch + ".";
  auto refuse = [&](const std::string& what) { return error(ErrorCode::kUnsupported, strfmt("%s: %s", name, what.c_str())); };
  if (file.find(p + "attention.sliding_window") == nullptr) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%sattention.sliding_window'", name, p.c_str()));
  }
  OX_ASSIGN_OR_RETURN(const uint32_t n_altup, file.get_u32_or(p + "altup.num_inputs", gemma3n::kAltup));
  OX_ASSIGN_OR_RETURN(const uint32_t i_active, file.get_u32_or(p + "altup.active_idx", 0));
  if (n_altup != gemma3n::kAltup || i_active != 0) {
    return refuse(strfmt("'%saltup.num_inputs' %u / '%saltup.active_idx' %u: llama.cpp runs 4 AltUp streams, the first "
                         "active", p.c_str(), n_altup, p.c_str(), i_active));
  }
  if (hp.n_embd_per_layer != gemma3n::kPerLayer) {
    return refuse(strfmt("'%sembedding_length_per_layer_input' is %d: llama.cpp's gemma3n has %d", p.c_str(),
                         hp.n_embd_per_layer, gemma3n::kPerLayer));
  }
  const int n_own = std::min(hp.n_layer, gemma3n::kFirstSharedKvLayer);
  if (file.find(p + "attention.shared_kv_layers") != nullptr && hp.n_layer - hp.n_kv_shared_layers != n_own) {
    return refuse(strfmt("'%sattention.shared_kv_layers' is %d for %d layers: llama.cpp reuses K/V from layer %d on",
                         p.c_str(), hp.n_kv_shared_layers, hp.n_layer, gemma3n::kFirstSharedKvLayer));
  }
  // One shape for every layer (llama.cpp's gemma3n reads layer 0's).
  for (int l = 1; l < static_cast<int>(hp.n_ff_layer.size()); ++l) {
    if (hp.n_ff_layer[static_cast<size_t>(l)] != hp.n_ff_layer[0]) {
      return refuse(strfmt("'%sfeed_forward_length' differs between layers 0 and %d", p.c_str(), l));
    }
  }
  for (int l = 1; l < static_cast<int>(hp.n_head_kv_layer.size()); ++l) {
    if (hp.n_head_kv_layer[static_cast<size_t>(l)] != hp.n_head_kv_layer[0]) {
      return refuse(strfmt("'%sattention.head_count_kv' differs between layers 0 and %d", p.c_str(), l));
    }
  }
  if (hp.head_dim_k != hp.head_dim_v || hp.head_dim_k_swa != hp.head_dim_k || hp.head_dim_v_swa != hp.head_dim_v ||
      hp.n_rot_swa != hp.n_rot) {
    return refuse("gemma3n needs one head size for keys and values on every layer");
  }
  // The sparse feed-forwards: llama.cpp's first 10 layers at the normal distribution's 95th
  // percentile, whatever the file lists.
  if (const gguf::Value* v = file.find(p + "activation_sparsity_scale"); v != nullptr) {
    bool same = v->type == gguf::ValueType::ARRAY && v->count == static_cast<uint64_t>(hp.n_layer);
    for (uint64_t l = 0; same && l < v->count; ++l) {
      const double want = static_cast<int>(l) < gemma3n::kSparseLayers ? gemma3n::kSparsityStdMul : 0.0;
      same = std::fabs(v->number_at(l) - want) < 1e-4;
    }
    if (!same) {
      return refuse(strfmt("'%sactivation_sparsity_scale' differs from llama.cpp's (%.4f on the first %d layers, 0 after)",
                           p.c_str(), gemma3n::kSparsityStdMul, gemma3n::kSparseLayers));
    }
  }
  return Status::ok();
}

// llama.cpp's llama_model_gemma3n::load_arch_tensors.
void plan(const ArchSpec& s, const HParams& hp, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd, n_pl = gemma3n::kPerLayer, n_layer = hp.n_layer, n_altup = gemma3n::kAltup;
  const int64_t hd = hp.head_dim_k, q_dim = hd * hp.n_head, kv_dim = hd * hp.n_head_kv, ff = hp.n_ff;
  auto add = [&](Tn role, int layer, std::vector<int64_t> dims, Has has = Has::kYes) {
    out.push_back({role, layer, false, has, std::move(dims)});
  };
  add(Tn::kTokenEmbd, -1, {d, hp.n_vocab});
  add(Tn::kAltupProj, -1, {d, d, n_altup - 1});
  add(Tn::kAltupUnembdProj, -1, {d, d, n_altup - 1});
  add(Tn::kPerLayerTokenEmbd, -1, {n_pl * n_layer, hp.n_vocab});
  add(Tn::kPerLayerModelProj, -1, {d, n_pl * n_layer});
  add(Tn::kPerLayerProjNorm, -1, {n_pl});
  for (int l = 0; l < n_layer; ++l) {
    add(Tn::kAttnNorm, l, {d});
    plan_qkv(s, l, d, q_dim, kv_dim, kv_dim, s.bias.qkv, out);  // K/V on the layers that reuse them too, as llama.cpp
    add(Tn::kAttnOutput, l, {q_dim, d});
    add(Tn::kAttnQNorm, l, {hd});
    add(Tn::kAttnKNorm, l, {hd});
    add(Tn::kAttnPostNorm, l, {d});
    add(Tn::kFfnNorm, l, {d});
    add(Tn::kFfnGate, l, {d, ff});
    add(Tn::kFfnUp, l, {d, ff});
    add(Tn::kFfnDown, l, {ff, d});
    add(Tn::kFfnPostNorm, l, {d});
    add(Tn::kPerLayerInpGate, l, {d, n_pl});
    add(Tn::kPerLayerProj, l, {n_pl, d});
    add(Tn::kPerLayerPostNorm, l, {d});
    add(Tn::kAltupCorrectCoef, l, {n_altup, n_altup});
    add(Tn::kAltupCorrectScale, l, {d});
    add(Tn::kAltupPredictCoef, l, {n_altup, n_altup * n_altup});
    add(Tn::kAltupRouter, l, {d, n_altup});
    add(Tn::kAltupRouterNorm, l, {d});
    add(Tn::kLaurelL, l, {d, gemma3n::kLaurelRank});
    add(Tn::kLaurelR, l, {gemma3n::kLaurelRank, d});
    add(Tn::kLaurelPostNorm, l, {d});
  }
  add(Tn::kOutputNorm, -1, {d});
  add(Tn::kOutput, -1, {d, hp.n_vocab}, Has::kOptional);
}

}  // namespace

extern const ArchDef gemma3n{
    .name = "gemma3n",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .shared_kv_from = gemma3n::kFirstSharedKvLayer,
             .qk_norm = true,
             .post_norms = true,
             .embd_scale = true,
             .attn_scale = 1.0f,
             .final_softcap = 30.0f,  // llama.cpp's default, not read from the file
             .swa_pattern = 5,
             .rope_base_swa = 10000.0f,
             .rope_scale_swa = 1.0f},
    .configure = configure,
    .forward = forward_gemma3n,
    .plan = plan,
    // Window and global layers in turn, sparse feed-forwards (the first 10 layers); per-layer inputs
    // of 256, as llama.cpp fixes them. The parity variant gemma3n@22 (--layers 22) adds dense
    // feed-forwards and layers 20, 21 reusing layer 18's and 19's K/V.
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32Layers, 0, "1,0"},
                   {"embedding_length_per_layer_input", SynthKey::kU32, 256},
                   {"altup.active_idx", SynthKey::kU32, 0},
                   {"altup.num_inputs", SynthKey::kU32, 4},
                   {"rope.freq_base", SynthKey::kF32, 1000000},
                   {"rope.freq_base_swa", SynthKey::kF32, 10000}},
};

}  // namespace ox::archs
