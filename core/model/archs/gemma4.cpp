// Gemma 4 (llama.cpp's src/models/gemma4.cpp): Gemma 3's block with window and global layers of
// different head sizes and KV head counts (flags per layer), V heads RMS-normalised, attention
// unscaled, "proportional" rope on the global layers (rope_freqs), per-layer token inputs, the
// last layers reusing earlier layers' K/V, per-layer feed-forward widths, an optional MoE branch
// beside the dense one, a scalar per layer and a final soft-cap (forward_gemma4.cpp).
#include "core/model/arch_registry.h"
#include "core/model/forward_gemma.h"
#include "core/model/moe.h"
#include "core/model/tensor_plan.h"

namespace ox::archs {
namespace {

// (configure has checked the flags: the plan also serves HParams made by hand, without them)
bool window_layer(const HParams& hp, int l) {
  return static_cast<size_t>(l) < hp.swa_layers.size() && hp.swa_layers[static_cast<size_t>(l)];
}
int layer_n_head_kv(const HParams& hp, int l) {
  return hp.n_head_kv_layer.empty() ? hp.n_head_kv : hp.n_head_kv_layer[static_cast<size_t>(l)];
}

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec) {
  const char* name = file.name().c_str();
  const std::string p = hp.arch + ".";
  // The keys llama.cpp requires of every gemma4 file.
  for (const char* key : {"attention.sliding_window", "attention.sliding_window_pattern", "attention.key_length_swa",
                          "attention.value_length_swa", "embedding_length_per_layer_input",
                          "attention.layer_norm_rms_epsilon"}) {
    if (file.find(p + key) == nullptr) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s%s'", name, p.c_str(), key));
    }
  }
  if (hp.swa_layers.empty()) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.sliding_window_pattern' must hold one flag per layer",
                                                 name, p.c_str()));
  }
  if (hp.head_dim_k != hp.head_dim_v || hp.head_dim_k_swa != hp.head_dim_v_swa) {
    return error(ErrorCode::kUnsupported, strfmt("%s: gemma4 needs key and value heads of one size (global %d / %d, "
                                                 "window %d / %d)",
                                                 name, hp.head_dim_k, hp.head_dim_v, hp.head_dim_k_swa, hp.head_dim_v_swa));
  }
  for (int l = 0; l < hp.n_layer; ++l) {
    const int n_kv = layer_n_head_kv(hp, l);
    if (n_kv <= 0 || hp.n_head % n_kv != 0) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: layer %d has %d KV heads for %d heads", name, l, n_kv, hp.n_head));
    }
  }
  // Shared K/V: layer l >= n_own reads layer n_own - 2 (window) or n_own - 1 (global), which must
  // be of its kind and shape (llama.cpp's layer_reuse_cb assumes it).
  const int n_own = hp.n_layer - hp.n_kv_shared_layers;
  if (hp.n_kv_shared_layers > 0) {
    if (n_own < 2 || !window_layer(hp, n_own - 2) || window_layer(hp, n_own - 1)) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("%s: '%sattention.shared_kv_layers' = %d needs a window layer and then a global layer just "
                          "before layer %d",
                          name, p.c_str(), hp.n_kv_shared_layers, n_own));
    }
    for (int l = n_own; l < hp.n_layer; ++l) {
      const int src = n_own - (window_layer(hp, l) ? 2 : 1);
      if (layer_n_head_kv(hp, l) != layer_n_head_kv(hp, src)) {
        return error(ErrorCode::kInvalidFile, strfmt("%s: layer %d reuses layer %d's K/V but has %d KV heads, not %d",
                                                     name, l, src, layer_n_head_kv(hp, l), layer_n_head_kv(hp, src)));
      }
    }
  }
  if (hp.n_expert > 0 && hp.n_ff_exp <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%sexpert_feed_forward_length'", name, p.c_str()));
  }
  // The experts' layout, as llama.cpp takes either: converted files fuse each expert's gate and up
  // projections (ffn_gate_up_exps); synth's parity models keep them apart (ffn_gate_exps, ffn_up_exps).
  spec.experts.fused_gate_up = hp.n_expert > 0 && file.find_tensor("blk.0.ffn_gate_up_exps.weight") != nullptr;
  return Status::ok();
}

// The tensors, as llama.cpp's llama_model_gemma4::load_arch_tensors: each layer's attention has
// its kind's head size; layers that reuse K/V have no K, V or K norm; the MoE branch where the
// file has experts (expert_count > 0), per-layer inputs where embedding_length_per_layer_input > 0.
void plan(const ArchSpec& s, const HParams& hp, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd, n_pl = hp.n_embd_per_layer, n_layer = hp.n_layer;
  auto add = [&](Tn role, int layer, std::vector<int64_t> dims, Has has = Has::kYes) {
    out.push_back({role, layer, false, has, std::move(dims)});
  };
  add(Tn::kTokenEmbd, -1, {d, hp.n_vocab});
  if (n_pl > 0) {
    add(Tn::kPerLayerTokenEmbd, -1, {n_pl * n_layer, hp.n_vocab});
    add(Tn::kPerLayerModelProj, -1, {d, n_pl * n_layer});
    add(Tn::kPerLayerProjNorm, -1, {n_pl});
  }
  bool has_global = false;
  for (int l = 0; l < n_layer; ++l) has_global = has_global || !window_layer(hp, l);
  if (has_global) add(Tn::kRopeFreqs, -1, {hp.head_dim_k / 2}, s.rope_freqs);
  const int n_own = hp.n_layer - hp.n_kv_shared_layers;
  for (int l = 0; l < n_layer; ++l) {
    const int64_t hd = window_layer(hp, l) && hp.head_dim_k_swa > 0 ? hp.head_dim_k_swa : hp.head_dim_k;
    const int64_t kv_dim = hd * layer_n_head_kv(hp, l);
    const int64_t ff = hp.n_ff_layer.empty() ? hp.n_ff : hp.n_ff_layer[static_cast<size_t>(l)];
    add(Tn::kAttnNorm, l, {d});
    add(Tn::kAttnQ, l, {d, hd * hp.n_head});
    if (l < n_own) {
      add(Tn::kAttnK, l, {d, kv_dim});
      add(Tn::kAttnV, l, {d, kv_dim}, Has::kOptional);  // absent: V is K's projection
    }
    add(Tn::kAttnOutput, l, {hd * hp.n_head, d});
    add(Tn::kAttnQNorm, l, {hd});
    if (l < n_own) add(Tn::kAttnKNorm, l, {hd});
    add(Tn::kAttnPostNorm, l, {d});
    add(Tn::kLayerOutScale, l, {1}, Has::kOptional);
    add(Tn::kFfnNorm, l, {d});
    add(Tn::kFfnGate, l, {d, ff});
    add(Tn::kFfnUp, l, {d, ff});
    add(Tn::kFfnDown, l, {ff, d});
    add(Tn::kFfnPostNorm, l, {d});
    if (moe_layer(s, hp, l)) {
      const int64_t ff_exp = hp.n_ff_exp, n_exp = hp.n_expert;
      add(Tn::kFfnGateInp, l, {d, n_exp});
      add(Tn::kFfnGateInpScale, l, {d});
      add(Tn::kFfnPreNorm2, l, {d});
      add(Tn::kFfnPostNorm1, l, {d});
      add(Tn::kFfnPostNorm2, l, {d});
      if (s.experts.fused_gate_up) {
        add(Tn::kFfnGateUpExps, l, {d, 2 * ff_exp, n_exp});
      } else {
        add(Tn::kFfnGateExps, l, {d, ff_exp, n_exp});
        add(Tn::kFfnUpExps, l, {d, ff_exp, n_exp});
      }
      add(Tn::kFfnDownExps, l, {ff_exp, d, n_exp});
      add(Tn::kFfnDownExpsScale, l, {n_exp}, Has::kOptional);
    }
    if (n_pl > 0) {
      add(Tn::kPerLayerInpGate, l, {d, n_pl});
      add(Tn::kPerLayerProj, l, {n_pl, d});
      add(Tn::kPerLayerPostNorm, l, {d});
    }
  }
  add(Tn::kOutputNorm, -1, {d});
  add(Tn::kOutput, -1, {d, hp.n_vocab}, Has::kOptional);
}

}  // namespace

extern const ArchDef gemma4{
    .name = "gemma4",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .rope_freqs = Has::kOptional,
             .rope_freqs_global_only = true,
             .shared_kv = true,
             .qkv_either = false,
             .qk_norm = true,
             .post_norms = true,
             .moe = true,
             .experts = {.act = ExpertAct::kGeGlu},
             .embd_scale = true,
             .attn_scale = 1.0f,
             .softcaps = true,  // the final one only: gemma4 has no attention soft-cap
             .rope_base_swa = 10000.0f,
             .rope_scale_swa = 1.0f},
    .configure = configure,
    .forward = forward_gemma4,
    .plan = plan,
    // 4 layers (window, global, window, global), the last two reusing layers 0 and 1's K/V and
    // twice as wide a feed-forward; global heads of 128 (1 KV head), window heads of 64 (2 KV heads)
    // with half of them rotated; 4 experts; per-layer inputs of 256.
    .synth_keys = {{"block_count", SynthKey::kU32, 4},
                   {"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32Layers, 0, "1,0"},
                   {"attention.shared_kv_layers", SynthKey::kU32, 2},
                   {"attention.head_count_kv", SynthKey::kU32Layers, 0, "2,1"},
                   {"attention.key_length", SynthKey::kU32, 128},
                   {"attention.value_length", SynthKey::kU32, 128},
                   {"attention.key_length_swa", SynthKey::kU32, 64},
                   {"attention.value_length_swa", SynthKey::kU32, 64},
                   {"rope.dimension_count", SynthKey::kU32, 128},
                   {"rope.dimension_count_swa", SynthKey::kU32, 32},
                   {"rope.freq_base", SynthKey::kF32, 1000000},
                   {"rope.freq_base_swa", SynthKey::kF32, 10000},
                   {"feed_forward_length", SynthKey::kU32Layers, 0, "512,512,1024,1024"},
                   {"embedding_length_per_layer_input", SynthKey::kU32, 256},
                   {"final_logit_softcapping", SynthKey::kF32, 30},
                   {"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256}},
};

}  // namespace ox::archs
