// Generic loading: every tensor of the plan (tensor_plan.h) into its slot of ModelWeights, with
// names and shapes checked by the builder; fused tensors become row views so the forward pass
// sees one layout; per-layer attention settings from the spec and the hyperparameters.
#include "core/model/decoder_load.h"

#include <cmath>

#include "core/model/rope_scaling.h"
#include "core/model/tensor_plan.h"
#include "core/model/xielu_params.h"

namespace ox {
namespace {

// Where a planned tensor goes. Fused attn_qkv / [gate | up] land in wq / ffn_up first and are
// split afterwards (split_fused). The spec's ffn_norm role (attn_norm_2, seed_oss's
// post_attention_norm) is the feed-forward's norm.
Tensor* slot(ModelWeights& w, const PlannedTensor& t, const ArchSpec& s) {
  if (t.layer < 0) {
    switch (t.role) {
      case Tn::kTokenEmbd: return &w.token_embd;
      case Tn::kPositionEmbd: return &w.position_embd;
      case Tn::kOutputNorm: return t.bias ? &w.output_norm_b : &w.output_norm;
      case Tn::kOutput: return t.bias ? &w.output_b : &w.output;
      case Tn::kRopeFreqs: return &w.rope_freqs;
      default: return nullptr;
    }
  }
  LayerWeights& L = w.layers[static_cast<size_t>(t.layer)];
  switch (t.role) {
    case Tn::kAttnNorm: return t.bias ? &L.attn_norm_b : &L.attn_norm;
    case Tn::kAttnNorm2:
    case Tn::kFfnNorm: return t.bias ? &L.ffn_norm_b : &L.ffn_norm;
    case Tn::kAttnQ:
    case Tn::kAttnQkv: return t.bias ? &L.bq : &L.wq;
    case Tn::kAttnK: return t.bias ? &L.bk : &L.wk;
    case Tn::kAttnV: return t.bias ? &L.bv : &L.wv;
    case Tn::kAttnOutput: return t.bias ? &L.bo : &L.wo;
    case Tn::kAttnQNorm: return &L.q_norm;
    case Tn::kAttnKNorm: return &L.k_norm;
    case Tn::kAttnPostNorm: return s.ffn_norm == Tn::kAttnPostNorm ? &L.ffn_norm : &L.attn_post_norm;
    case Tn::kFfnGate: return t.bias ? &L.ffn_gate_b : &L.ffn_gate;
    case Tn::kFfnUp: return t.bias ? &L.ffn_up_b : &L.ffn_up;
    case Tn::kFfnDown: return t.bias ? &L.ffn_down_b : &L.ffn_down;
    case Tn::kFfnPostNorm: return &L.ffn_post_norm;
    case Tn::kFfnGateInp: return &L.ffn_gate_inp;
    case Tn::kFfnGateExps: return &L.ffn_gate_exps;
    case Tn::kFfnUpExps: return &L.ffn_up_exps;
    case Tn::kFfnDownExps: return &L.ffn_down_exps;
    default: return nullptr;
  }
}

Status load_planned(ModelBuilder& b, const PlannedTensor& t, Tensor* out) {
  const std::string name = t.name();
  const bool required = t.presence == Has::kYes;
  if (t.vector()) {
    OX_ASSIGN_OR_RETURN(*out, required ? b.vector(name, t.dims[0]) : b.optional_vector(name, t.dims[0]));
  } else if (t.dims.size() == 3) {
    OX_ASSIGN_OR_RETURN(*out, b.matrices(name, t.dims[0], t.dims[1], t.dims[2]));
  } else {
    OX_ASSIGN_OR_RETURN(*out, required ? b.matrix(name, t.dims[0], t.dims[1]) : b.optional_matrix(name, t.dims[0], t.dims[1]));
  }
  return Status::ok();
}

// attn_qkv rows [q | k | v] (bias likewise) and ffn_up rows [gate | up] as separate views.
void split_fused(const ArchSpec& s, const HParams& hp, LayerWeights& L) {
  const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim_k;
  const int64_t k_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
  const int64_t v_dim = int64_t{hp.n_head_kv} * hp.head_dim_v;
  if (s.fused_qkv) {
    const Tensor qkv = L.wq, qkv_b = L.bq;
    L.wq = row_slice(qkv, 0, q_dim);
    L.wk = row_slice(qkv, q_dim, k_dim);
    L.wv = row_slice(qkv, q_dim + k_dim, v_dim);
    if (!qkv_b.empty()) {
      L.bq = element_slice(qkv_b, 0, q_dim);
      L.bk = element_slice(qkv_b, q_dim, k_dim);
      L.bv = element_slice(qkv_b, q_dim + k_dim, v_dim);
    }
  }
  if (s.fused_gate_up && !s.moe) {
    const Tensor gate_up = L.ffn_up;
    L.ffn_gate = row_slice(gate_up, 0, hp.n_ff);
    L.ffn_up = row_slice(gate_up, hp.n_ff, hp.n_ff);
  }
}

}  // namespace

std::vector<LayerAttention> layer_attention(const ArchSpec& s, const HParams& hp, const float* rope_freqs) {
  const int pattern = hp.swa_pattern > 0 ? hp.swa_pattern : s.swa_pattern;
  const float base_swa = hp.rope_freq_base_swa > 0 ? hp.rope_freq_base_swa : s.rope_base_swa;
  std::vector<LayerAttention> layers(static_cast<size_t>(hp.n_layer));
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerAttention& a = layers[static_cast<size_t>(l)];
    const int n_swa = hp.n_swa > 0 ? hp.n_swa : s.n_swa_default;
    const bool swa = n_swa > 0 && s.swa_pattern > 0 && l % pattern < pattern - 1;
    a.window = swa ? n_swa : 0;
    a.rope.style = s.rope_style;
    a.rope.n_rot = hp.n_rot;
    // Window layers may have their own base and scaling (gemma3: 10000, unscaled).
    a.rope.freq_base = swa && base_swa > 0 ? base_swa : hp.rope_freq_base;
    if (s.rope_alpha_base && hp.rope_scaling_alpha > 0.0f) {  // hunyuan's NTK alpha, in float as llama.cpp
      const float dim = static_cast<float>(hp.head_dim_k);
      a.rope.freq_base = hp.rope_freq_base * std::pow(hp.rope_scaling_alpha, dim / (dim - 2.0f));
    }
    a.rope.freq_scale = swa && s.rope_scale_swa > 0 ? s.rope_scale_swa : hp.rope_freq_scale;
    a.rope.freq_factors = rope_freqs;
    apply_rope_scaling(s, hp, a.rope);
    // NoPE layers (smollm3's every fourth): nothing to rotate.
    if (s.no_rope_layer_step > 0 && (l + 1) % s.no_rope_layer_step == 0) a.rope.n_rot = 0;
    if (s.rope_swa_only && n_swa > 0 && s.swa_pattern > 0 && !swa) a.rope.n_rot = 0;  // exaone4's global layers
  }
  return layers;
}

Status load_decoder(ModelBuilder& b) {
  const HParams& hp = b.hp();
  const ArchSpec& s = b.spec();
  ModelWeights& w = b.weights();
  const char* file = b.file().name().c_str();
  if (hp.n_vocab <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: vocabulary size unknown (no %s.vocab_size, no "
                                                 "tokenizer.ggml.tokens)", file, hp.arch.c_str()));
  }
  if (hp.n_ff <= 0) return error(ErrorCode::kInvalidFile, strfmt("%s: feed_forward_length must be positive", file));
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (const PlannedTensor& t : plan_tensors(s, hp)) {
    Tensor* out = slot(w, t, s);
    OX_CHECK(out != nullptr);
    OX_TRY(load_planned(b, t, out));
  }
  if (s.ffn == FfnKind::kXielu) OX_TRY(read_xielu(b.file(), hp, w.layers));
  // Tied embeddings: without output.weight the embedding matrix doubles as the output projection.
  if (w.output.empty()) w.output = w.token_embd;
  for (LayerWeights& L : w.layers) split_fused(s, hp, L);
  b.set_layers(layer_attention(s, hp, w.rope_freqs.empty() ? nullptr : reinterpret_cast<const float*>(w.rope_freqs.data)));
  return Status::ok();
}

}  // namespace ox
