// Generic loading: every tensor of the plan (tensor_plan.h) into its slot of ModelWeights, with
// names and shapes checked by the builder; fused tensors become row views so the forward pass
// sees one layout; per-layer attention settings from the spec and the hyperparameters.
#include "core/model/decoder_load.h"

#include <algorithm>
#include <cmath>

#include "core/model/moe.h"

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
      case Tn::kOutputNormLfm2:
      case Tn::kEncOutputNorm: return &w.output_norm;
      case Tn::kTokenEmbdNorm: return t.bias ? &w.token_embd_norm_b : &w.token_embd_norm;
      case Tn::kOutput: return t.bias ? &w.output_b : &w.output;
      case Tn::kRopeFreqs: return &w.rope_freqs;
      case Tn::kTokenTypes: return &w.token_types;
      case Tn::kCls: return t.bias ? &w.cls_b : &w.cls;
      case Tn::kClsNorm: return &w.cls_norm;
      case Tn::kClsOut: return t.bias ? &w.cls_out_b : &w.cls_out;
      case Tn::kPerLayerTokenEmbd: return &w.per_layer_token_embd;
      case Tn::kPerLayerModelProj: return &w.per_layer_model_proj;
      case Tn::kPerLayerProjNorm: return &w.per_layer_proj_norm;
      case Tn::kAltupProj: return &w.altup_proj;
      case Tn::kAltupUnembdProj: return &w.altup_unembd_proj;
      default: return nullptr;
    }
  }
  LayerWeights& L = w.layers[static_cast<size_t>(t.layer)];
  switch (t.role) {
    case Tn::kEncAttnNorm:  // T5's encoder: the generic roles under other names
    case Tn::kAttnNorm: return t.bias ? &L.attn_norm_b : &L.attn_norm;
    case Tn::kAttnNorm2:  // a post-norm block's second attention norm, else the feed-forward's (falcon-40B)
      if (s.residual == Residual::kPostNorm) return t.bias ? &L.attn_norm_2_b : &L.attn_norm_2;
      return t.bias ? &L.ffn_norm_b : &L.ffn_norm;
    case Tn::kFfnNormBare:  // falcon-h1
    case Tn::kEncFfnNorm:
    case Tn::kFfnNorm: return t.bias ? &L.ffn_norm_b : &L.ffn_norm;
    case Tn::kAttnQ:
    case Tn::kEncAttnQ:
    case Tn::kAttnQkv: return t.bias ? &L.bq : &L.wq;
    case Tn::kEncAttnK:
    case Tn::kAttnK: return t.bias ? &L.bk : &L.wk;
    case Tn::kEncAttnV:
    case Tn::kAttnV: return t.bias ? &L.bv : &L.wv;
    case Tn::kEncAttnOut:
    case Tn::kAttnOutput: return t.bias ? &L.bo : &L.wo;
    case Tn::kEncAttnRelB: return &L.attn_rel_b;
    case Tn::kAttnQNorm: return t.bias ? &L.q_norm_b : &L.q_norm;
    case Tn::kAttnKNorm: return t.bias ? &L.k_norm_b : &L.k_norm;
    case Tn::kAttnPostNorm: return s.ffn_norm == Tn::kAttnPostNorm ? &L.ffn_norm : &L.attn_post_norm;
    case Tn::kEncFfnGate:
    case Tn::kFfnGate: return t.bias ? &L.ffn_gate_b : &L.ffn_gate;
    case Tn::kEncFfnUp:
    case Tn::kFfnUp: return t.bias ? &L.ffn_up_b : &L.ffn_up;
    case Tn::kEncFfnDown:
    case Tn::kFfnDown: return t.bias ? &L.ffn_down_b : &L.ffn_down;
    case Tn::kFfnPostNorm: return &L.ffn_post_norm;
    case Tn::kFfnGateInp: return t.bias ? &L.ffn_gate_inp_b : &L.ffn_gate_inp;
    case Tn::kFfnGateExps: return t.bias ? &L.ffn_gate_exps_b : &L.ffn_gate_exps;
    case Tn::kFfnUpExps: return t.bias ? &L.ffn_up_exps_b : &L.ffn_up_exps;
    case Tn::kFfnDownExps: return t.bias ? &L.ffn_down_exps_b : &L.ffn_down_exps;
    case Tn::kFfnGateUpExps: return &L.ffn_up_exps;  // split per expert by moe_ffn
    case Tn::kAttnSinks: return &L.attn_sinks;
    case Tn::kAttnOutNorm: return t.bias ? &L.attn_out_norm_b : &L.attn_out_norm;
    case Tn::kLayerOutNorm: return t.bias ? &L.layer_out_norm_b : &L.layer_out_norm;
    case Tn::kFfnExpProbsB: return &L.exp_probs_b;
    case Tn::kFfnGateInpShexp: return &L.ffn_gate_inp_shexp;
    case Tn::kFfnGateShexp: return &L.ffn_gate_shexp;
    case Tn::kFfnUpShexp: return &L.ffn_up_shexp;
    case Tn::kFfnDownShexp: return &L.ffn_down_shexp;
    // state-space layers
    case Tn::kSsmIn: return &L.ssm_in;
    case Tn::kSsmConv1d: return t.bias ? &L.ssm_conv1d_b : &L.ssm_conv1d;
    case Tn::kSsmX: return &L.ssm_x;
    case Tn::kSsmDt: return t.bias ? &L.ssm_dt_b : &L.ssm_dt;
    case Tn::kSsmA: return &L.ssm_a;
    case Tn::kSsmD: return &L.ssm_d;
    case Tn::kSsmNorm: return &L.ssm_norm;
    case Tn::kSsmOut: return &L.ssm_out;
    // lfm2's short convolution: the same roles as Mamba's convolution and projections
    case Tn::kShortConvConv: return &L.ssm_conv1d;
    case Tn::kShortConvInProj: return &L.ssm_in;
    case Tn::kShortConvOutProj: return &L.ssm_out;
    // RWKV-7
    case Tn::kTimeMixW0: return &L.rwkv.w0;
    case Tn::kTimeMixW1: return &L.rwkv.w1;
    case Tn::kTimeMixW2: return &L.rwkv.w2;
    case Tn::kTimeMixA0: return &L.rwkv.a0;
    case Tn::kTimeMixA1: return &L.rwkv.a1;
    case Tn::kTimeMixA2: return &L.rwkv.a2;
    case Tn::kTimeMixV0: return &L.rwkv.v0;
    case Tn::kTimeMixV1: return &L.rwkv.v1;
    case Tn::kTimeMixV2: return &L.rwkv.v2;
    case Tn::kTimeMixG1: return &L.rwkv.g1;
    case Tn::kTimeMixG2: return &L.rwkv.g2;
    case Tn::kTimeMixLerpFused: return &L.rwkv.lerp_fused;
    case Tn::kTimeMixKK: return &L.rwkv.k_k;
    case Tn::kTimeMixKA: return &L.rwkv.k_a;
    case Tn::kTimeMixRK: return &L.rwkv.r_k;
    case Tn::kTimeMixKey: return &L.rwkv.key;
    case Tn::kTimeMixValue: return &L.rwkv.value;
    case Tn::kTimeMixReceptance: return &L.rwkv.receptance;
    case Tn::kTimeMixLn: return t.bias ? &L.rwkv.ln_b : &L.rwkv.ln;
    case Tn::kTimeMixOutput: return &L.rwkv.output;
    case Tn::kChannelMixLerpK: return &L.rwkv.cm_lerp_k;
    case Tn::kChannelMixKey: return &L.rwkv.cm_key;
    case Tn::kChannelMixValue: return &L.rwkv.cm_value;
    // qwen35
    case Tn::kAttnGate: return &L.attn_gate;
    case Tn::kSsmBeta: return &L.ssm_beta;
    case Tn::kSsmAlpha: return &L.ssm_alpha;
    // deepseek2's latent attention
    case Tn::kAttnQA: return &L.wq_a;
    case Tn::kAttnQB: return &L.wq_b;
    case Tn::kAttnQANorm: return &L.q_a_norm;
    case Tn::kAttnKvAMqa: return &L.wkv_a_mqa;
    case Tn::kAttnKvANorm: return &L.kv_a_norm;
    case Tn::kAttnKvB: return &L.wkv_b;
    case Tn::kAttnKB: return &L.wk_b;
    case Tn::kAttnVB: return &L.wv_b;
    // gemma4
    case Tn::kPerLayerInpGate: return &L.per_layer_inp_gate;
    case Tn::kPerLayerProj: return &L.per_layer_proj;
    case Tn::kPerLayerPostNorm: return &L.per_layer_post_norm;
    case Tn::kLayerOutScale: return &L.out_scale;
    case Tn::kFfnPreNorm2: return &L.ffn_pre_norm_2;
    case Tn::kFfnPostNorm1: return &L.ffn_post_norm_1;
    case Tn::kFfnPostNorm2: return &L.ffn_post_norm_2;
    case Tn::kFfnGateInpScale: return &L.ffn_gate_inp_s;
    case Tn::kFfnDownExpsScale: return &L.ffn_down_exps_s;
    // gemma3n
    case Tn::kAltupCorrectCoef: return &L.altup_correct_coef;
    case Tn::kAltupCorrectScale: return &L.altup_correct_scale;
    case Tn::kAltupPredictCoef: return &L.altup_predict_coef;
    case Tn::kAltupRouter: return &L.altup_router;
    case Tn::kAltupRouterNorm: return &L.altup_router_norm;
    case Tn::kLaurelL: return &L.laurel_l;
    case Tn::kLaurelR: return &L.laurel_r;
    case Tn::kLaurelPostNorm: return &L.laurel_post_norm;
    default: return nullptr;
  }
}

// Small tensors the recurrent mixers read as plain floats rather than multiply by.
bool is_f32_matrix(const PlannedTensor& t) {
  if (t.bias) return false;
  return t.role == Tn::kSsmConv1d || t.role == Tn::kSsmA || t.role == Tn::kSsmD || t.role == Tn::kSsmNorm ||
         t.role == Tn::kShortConvConv || t.role == Tn::kTimeMixLerpFused || t.role == Tn::kEncAttnRelB;
}

Status load_planned(ModelBuilder& b, const PlannedTensor& t, Tensor* out) {
  const std::string name = t.name();
  const bool required = t.presence == Has::kYes;
  const bool expert_bias = t.bias && t.dims.size() == 2 &&
                           (t.role == Tn::kFfnGateExps || t.role == Tn::kFfnUpExps || t.role == Tn::kFfnDownExps);
  if (expert_bias) {  // per-expert biases: one f32 row per expert
    OX_ASSIGN_OR_RETURN(*out, b.matrix(name, t.dims[0], t.dims[1]));
    if (out->type != DType::F32) {
      return error(ErrorCode::kUnsupported, strfmt("%s: tensor '%s' must be F32", b.file().name().c_str(), name.c_str()));
    }
  } else if (is_f32_matrix(t) && !required && !b.has(name)) {
    *out = Tensor{};
  } else if (is_f32_matrix(t)) {
    OX_ASSIGN_OR_RETURN(*out, b.f32_matrix(name, t.dims[0], t.dims.size() > 1 ? t.dims.back() : 1));
  } else if (t.vector() && t.dims.size() == 2) {  // per-head norm weights, as one vector
    OX_ASSIGN_OR_RETURN(*out, b.optional_vectors(name, t.dims[0], t.dims[1]));
    if (required && out->empty()) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", b.file().name().c_str(), name.c_str()));
    }
  } else if (t.vector()) {
    OX_ASSIGN_OR_RETURN(*out, required ? b.vector(name, t.dims[0]) : b.optional_vector(name, t.dims[0]));
  } else if (t.dims.size() == 3) {
    OX_ASSIGN_OR_RETURN(*out, b.matrices(name, t.dims[0], t.dims[1], t.dims[2]));
  } else {
    OX_ASSIGN_OR_RETURN(*out, required ? b.matrix(name, t.dims[0], t.dims[1]) : b.optional_matrix(name, t.dims[0], t.dims[1]));
  }
  return Status::ok();
}

// A multi-token-prediction block's tensor (ArchSpec::nextn): its shape and type checked, nothing
// loaded or converted. A "trunk only" file (no blk.<n_layer>.nextn.eh_proj where the spec allows
// that) may lack any of them, as llama.cpp's loader takes it.
Status check_nextn(ModelBuilder& b, const PlannedTensor& t) {
  const HParams& hp = b.hp();
  const bool trunk_only = b.spec().nextn.trunk_only && !b.has(tensor_name(Tn::kNextnEhProj, hp.n_layer));
  const int64_t rows = t.dims.size() > 1 ? t.dims[1] : 1, n_mats = t.dims.size() > 2 ? t.dims[2] : 1;
  return b.check(t.name(), t.dims[0], rows, n_mats, t.presence == Has::kYes && !trunk_only);
}

// attn_qkv rows [q | k | v] (bias likewise) and ffn_up rows [gate | up] of layer l as separate
// views. q takes the rows k and v leave (qwen35's q rows hold its output gate too); qwen35's
// recurrent layers keep their own attn_qkv whole.
void split_fused(const ArchSpec& s, const HParams& hp, int l, LayerWeights& L) {
  const int64_t k_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
  const int64_t v_dim = int64_t{hp.n_head_kv} * hp.head_dim_v;
  if (s.fused_qkv && !is_recurrent_layer(s, hp, l)) {
    const Tensor qkv = L.wq, qkv_b = L.bq;
    const int64_t q_dim = qkv.rows - k_dim - v_dim;
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
    if (!L.ffn_up_b.empty()) {
      const Tensor gate_up_b = L.ffn_up_b;
      L.ffn_gate_b = element_slice(gate_up_b, 0, hp.n_ff);
      L.ffn_up_b = element_slice(gate_up_b, hp.n_ff, hp.n_ff);
    }
  }
}

// A fused attn_qkv without attn_qkv.bias may have attn_q/k/v.bias beside it (older files, as
// llama.cpp's create_tensor_qkv takes them): added only when all three are there, as llama.cpp's
// build_qkv adds them. Where the spec requires biases, one of the two forms must be there.
Status load_separate_qkv_biases(ModelBuilder& b, int l, LayerWeights& L) {
  const ArchSpec& s = b.spec();
  if (!s.fused_qkv || !s.qkv_either || s.bias.qkv == Has::kNo || !L.bq.empty() || is_recurrent_layer(s, b.hp(), l)) {
    return Status::ok();
  }
  OX_ASSIGN_OR_RETURN(Tensor bq, b.optional_vector(tensor_name(Tn::kAttnQ, l, "bias"), L.wq.rows));
  OX_ASSIGN_OR_RETURN(Tensor bk, b.optional_vector(tensor_name(Tn::kAttnK, l, "bias"), L.wk.rows));
  OX_ASSIGN_OR_RETURN(Tensor bv, b.optional_vector(tensor_name(Tn::kAttnV, l, "bias"), L.wv.rows));
  if (!bq.empty() && !bk.empty() && !bv.empty()) {
    L.bq = bq, L.bk = bk, L.bv = bv;
  } else if (s.bias.qkv == Has::kYes) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", b.file().name().c_str(),
                                                 tensor_name(Tn::kAttnQkv, l, "bias").c_str()));
  }
  return Status::ok();
}

}  // namespace

int n_layer_kv_own(const ArchSpec& s, const HParams& hp) {
  if (s.shared_kv_from > 0) return std::min(hp.n_layer, s.shared_kv_from);
  return hp.n_layer - (s.shared_kv ? hp.n_kv_shared_layers : 0);
}

std::vector<LayerAttention> layer_attention(const ArchSpec& s, const HParams& hp, const float* rope_freqs) {
  const int pattern = hp.swa_pattern > 0 ? hp.swa_pattern : s.swa_pattern;
  float base_swa = hp.rope_freq_base_swa > 0 ? hp.rope_freq_base_swa : s.rope_base_swa;
  if (s.rope_base_swa_unused) base_swa = 0;  // the global base on every layer
  std::vector<LayerAttention> layers(static_cast<size_t>(hp.n_layer));
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerAttention& a = layers[static_cast<size_t>(l)];
    const int n_swa = s.attn_chunk > 0 ? s.attn_chunk : hp.n_swa > 0 ? hp.n_swa : s.n_swa_default;
    // The window layers: all but the last of each pattern, or all but the first (modern-bert).
    // ... or the file's flag per layer (gemma4). Window layers may have heads of their own size.
    const bool window_layer =
        hp.swa_layers.empty() ? s.swa_pattern > 0 && (s.swa_dense_first ? l % pattern != 0 : l % pattern < pattern - 1)
                              : hp.swa_layers[static_cast<size_t>(l)];
    const bool swa = n_swa > 0 && window_layer;
    const int n_head_kv = hp.n_head_kv_layer.empty() ? 0 : hp.n_head_kv_layer[static_cast<size_t>(l)];
    a.n_head_kv = n_head_kv > 0 ? n_head_kv : hp.n_head_kv;
    // (0: HParams made by hand, not read: the global layers' sizes)
    a.head_dim_k = window_layer && hp.head_dim_k_swa > 0 ? hp.head_dim_k_swa : hp.head_dim_k;
    a.head_dim_v = window_layer && hp.head_dim_v_swa > 0 ? hp.head_dim_v_swa : hp.head_dim_v;
    // The layers past n_layer_kv_own attend over the cache of the last earlier layer of their
    // kind (window or global), as llama.cpp's layer_reuse_cb: they store nothing.
    const int n_kv_own = n_layer_kv_own(s, hp);
    a.stores_kv = l < n_kv_own;
    a.kv_layer = a.stores_kv ? l : n_kv_own - (window_layer ? 2 : 1);
    a.window = swa ? n_swa : 0;
    a.chunked = swa && s.attn_chunk > 0;
    a.rope.style = s.rope_style;
    // rope_swa_only (cohere2, exaone4 64L): where there is a window, global layers do not rotate.
    const bool nope_global = s.rope_swa_only && n_swa > 0 && s.swa_pattern > 0 && !swa;
    a.rope.n_rot = nope_global ? 0 : window_layer && hp.n_rot_swa > 0 ? hp.n_rot_swa : hp.n_rot;  // n_rot 0: no rotation
    // Window layers may have their own base and scaling (gemma3: 10000, unscaled).
    a.rope.freq_base = swa && base_swa > 0 ? base_swa : hp.rope_freq_base;
    if (s.rope_alpha_base && hp.rope_scaling_alpha > 0.0f) {  // hunyuan's NTK alpha, in float as llama.cpp
      const float dim = static_cast<float>(hp.head_dim_k);
      a.rope.freq_base = hp.rope_freq_base * std::pow(hp.rope_scaling_alpha, dim / (dim - 2.0f));
    }
    a.rope.freq_scale = swa && s.rope_scale_swa > 0 ? s.rope_scale_swa : hp.rope_freq_scale;
    // gemma4's rope_freqs shape the global layers' ("proportional") rotation only.
    a.rope.freq_factors = s.rope_freqs_global_only && window_layer ? nullptr : rope_freqs;
    if (s.nope_step > 0 && (l + 1) % s.nope_step == 0) {  // llama4's layers without positions
      a.rope.n_rot = 0;
      a.temp_tuning = s.attn_temp;
    }
    apply_rope_scaling(s, hp, a.rope);
    // NoPE layers (smollm3's every fourth): nothing to rotate.
    if (s.no_rope_layer_step > 0 && (l + 1) % s.no_rope_layer_step == 0) a.rope.n_rot = 0;
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
  if (hp.n_ff <= 0 && s.recurrent == Recurrent::kNone) return error(ErrorCode::kInvalidFile, strfmt("%s: feed_forward_length must be positive", file));
  if (s.moe && hp.n_expert > 0 && expert_ff(s, hp) <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s.expert_feed_forward_length'", file,
                                                 hp.arch.c_str()));
  }
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (const PlannedTensor& t : plan_tensors(s, hp)) {
    if (t.nextn) {
      OX_TRY(check_nextn(b, t));
      continue;
    }
    Tensor* out = slot(w, t, s);
    OX_CHECK(out != nullptr);
    OX_TRY(load_planned(b, t, out));
  }
  if (s.ffn == FfnKind::kXielu) OX_TRY(read_xielu(b.file(), hp, w.layers));
  // Tied embeddings: without output.weight the embedding matrix doubles as the output projection.
  if (w.output.empty()) w.output = w.token_embd;
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    split_fused(s, hp, l, L);
    OX_TRY(load_separate_qkv_biases(b, l, L));
  }
  b.set_layers(layer_attention(s, hp, w.rope_freqs.empty() ? nullptr : reinterpret_cast<const float*>(w.rope_freqs.data)));
  return Status::ok();
}

}  // namespace ox
