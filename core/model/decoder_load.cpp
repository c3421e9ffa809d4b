// Generic decoder loading: the tensors an ArchSpec calls for, by their GGUF names, with every
// shape checked. Fused tensors become row views so the forward pass sees one layout.
#include "core/model/archs.h"

namespace ox {
namespace {

// Norm weight, plus its bias when the file has one (LayerNorm architectures).
Status load_norm(ModelBuilder& b, const std::string& base, int64_t n, Tensor* weight, Tensor* bias) {
  OX_ASSIGN_OR_RETURN(*weight, b.vector(base + ".weight", n));
  if (bias != nullptr) {
    OX_ASSIGN_OR_RETURN(*bias, b.optional_vector(base + ".bias", n));
  }
  return Status::ok();
}

// A projection `blk.L.<base>.weight` (rows x cols) and its optional bias.
Status load_linear(ModelBuilder& b, int l, const char* base, int64_t cols, int64_t rows, Tensor* w, Tensor* bias) {
  OX_ASSIGN_OR_RETURN(*w, b.matrix(layer_name(l, base), cols, rows));
  if (bias != nullptr) {
    OX_ASSIGN_OR_RETURN(*bias, b.optional_vector(layer_name(l, base, "bias"), rows));
  }
  return Status::ok();
}

Status load_attention(ModelBuilder& b, int l, LayerWeights& L) {
  const HParams& hp = b.hp();
  const ArchSpec& s = b.spec();
  const int64_t d = hp.n_embd;
  const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim_k;
  const int64_t k_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
  const int64_t v_dim = int64_t{hp.n_head_kv} * hp.head_dim_v;
  if (s.fused_qkv) {
    // attn_qkv rows: [q (q_dim) | k (k_dim) | v (v_dim)], bias likewise.
    Tensor qkv, qkv_b;
    OX_TRY(load_linear(b, l, "attn_qkv", d, q_dim + k_dim + v_dim, &qkv, &qkv_b));
    L.wq = row_slice(qkv, 0, q_dim);
    L.wk = row_slice(qkv, q_dim, k_dim);
    L.wv = row_slice(qkv, q_dim + k_dim, v_dim);
    if (!qkv_b.empty()) {
      L.bq = element_slice(qkv_b, 0, q_dim);
      L.bk = element_slice(qkv_b, q_dim, k_dim);
      L.bv = element_slice(qkv_b, q_dim + k_dim, v_dim);
    }
  } else {
    OX_TRY(load_linear(b, l, "attn_q", d, q_dim, &L.wq, &L.bq));
    OX_TRY(load_linear(b, l, "attn_k", d, k_dim, &L.wk, &L.bk));
    OX_TRY(load_linear(b, l, "attn_v", d, v_dim, &L.wv, &L.bv));
  }
  OX_TRY(load_linear(b, l, "attn_output", int64_t{hp.n_head} * hp.head_dim_v, d, &L.wo, &L.bo));
  if (s.qk_norm) {
    OX_ASSIGN_OR_RETURN(L.q_norm, b.vector(layer_name(l, "attn_q_norm"), hp.head_dim_k));
    OX_ASSIGN_OR_RETURN(L.k_norm, b.vector(layer_name(l, "attn_k_norm"), hp.head_dim_k));
  }
  if (s.post_norms) {
    OX_ASSIGN_OR_RETURN(L.attn_post_norm, b.vector(layer_name(l, "post_attention_norm"), d));
  }
  return Status::ok();
}

Status load_ffn(ModelBuilder& b, int l, LayerWeights& L) {
  const HParams& hp = b.hp();
  const ArchSpec& s = b.spec();
  const int64_t d = hp.n_embd, ff = hp.n_ff;
  if (hp.n_expert > 0) {
    OX_ASSIGN_OR_RETURN(L.ffn_gate_inp, b.matrix(layer_name(l, "ffn_gate_inp"), d, hp.n_expert));
    OX_ASSIGN_OR_RETURN(L.ffn_gate_exps, b.matrices(layer_name(l, "ffn_gate_exps"), d, ff, hp.n_expert));
    OX_ASSIGN_OR_RETURN(L.ffn_up_exps, b.matrices(layer_name(l, "ffn_up_exps"), d, ff, hp.n_expert));
    OX_ASSIGN_OR_RETURN(L.ffn_down_exps, b.matrices(layer_name(l, "ffn_down_exps"), ff, d, hp.n_expert));
  } else if (s.fused_gate_up) {
    // ffn_up rows: [gate (n_ff) | up (n_ff)].
    Tensor gate_up;
    OX_ASSIGN_OR_RETURN(gate_up, b.matrix(layer_name(l, "ffn_up"), d, 2 * ff));
    L.ffn_gate = row_slice(gate_up, 0, ff);
    L.ffn_up = row_slice(gate_up, ff, ff);
    OX_TRY(load_linear(b, l, "ffn_down", ff, d, &L.ffn_down, &L.ffn_down_b));
  } else {
    if (s.ffn != FfnKind::kGelu) OX_TRY(load_linear(b, l, "ffn_gate", d, ff, &L.ffn_gate, &L.ffn_gate_b));
    OX_TRY(load_linear(b, l, "ffn_up", d, ff, &L.ffn_up, &L.ffn_up_b));
    OX_TRY(load_linear(b, l, "ffn_down", ff, d, &L.ffn_down, &L.ffn_down_b));
  }
  if (s.post_norms) {
    OX_ASSIGN_OR_RETURN(L.ffn_post_norm, b.vector(layer_name(l, "post_ffw_norm"), d));
  }
  return Status::ok();
}

}  // namespace

void set_layer_attention(ModelBuilder& b, RopeStyle style, int swa_pattern, float rope_base_swa,
                         float rope_scale_swa) {
  const HParams& hp = b.hp();
  ArchSpec& s = b.spec();
  s.layers.assign(static_cast<size_t>(hp.n_layer), LayerAttention{});
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerAttention& a = s.layers[static_cast<size_t>(l)];
    const bool swa = hp.n_swa > 0 && swa_pattern > 0 && l % swa_pattern < swa_pattern - 1;
    a.window = swa ? hp.n_swa : 0;
    a.rope.style = style;
    a.rope.n_rot = hp.n_rot;
    a.rope.freq_base = swa && rope_base_swa > 0 ? rope_base_swa : hp.rope_freq_base;
    a.rope.freq_scale = swa ? rope_scale_swa : hp.rope_freq_scale;
  }
}

Status load_decoder(ModelBuilder& b) {
  const HParams& hp = b.hp();
  ArchSpec& s = b.spec();
  ModelWeights& w = b.weights();
  const int64_t d = hp.n_embd;
  const char* file = b.file().name().c_str();
  if (hp.n_vocab <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: vocabulary size unknown (no %s.vocab_size, no "
                                                 "tokenizer.ggml.tokens)", file, hp.arch.c_str()));
  }
  if (hp.n_ff <= 0) return error(ErrorCode::kInvalidFile, strfmt("%s: feed_forward_length must be positive", file));
  if (s.layers.size() != static_cast<size_t>(hp.n_layer)) set_layer_attention(b, RopeStyle::kNorm, 0, 0.0f, 1.0f);

  OX_ASSIGN_OR_RETURN(w.token_embd, b.matrix("token_embd.weight", d, hp.n_vocab));
  if (!s.rope) {
    OX_ASSIGN_OR_RETURN(w.position_embd, b.matrix("position_embd.weight", d, hp.n_ctx_train));
  }
  OX_TRY(load_norm(b, "output_norm", d, &w.output_norm, &w.output_norm_b));
  // Tied embeddings: without output.weight the embedding matrix doubles as the output projection.
  OX_ASSIGN_OR_RETURN(w.output, b.optional_matrix("output.weight", d, hp.n_vocab));
  if (w.output.empty()) w.output = w.token_embd;
  OX_ASSIGN_OR_RETURN(w.output_b, b.optional_vector("output.bias", hp.n_vocab));
  if (s.rope) {
    OX_ASSIGN_OR_RETURN(w.rope_freqs, b.optional_vector("rope_freqs.weight", hp.n_rot / 2));
  }

  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    OX_TRY(load_norm(b, strfmt("blk.%d.attn_norm", l), d, &L.attn_norm, &L.attn_norm_b));
    if (s.residual != Residual::kParallel) {
      OX_TRY(load_norm(b, strfmt("blk.%d.%s", l, s.ffn_norm_name), d, &L.ffn_norm, &L.ffn_norm_b));
    }
    OX_TRY(load_attention(b, l, L));
    OX_TRY(load_ffn(b, l, L));
    s.layers[static_cast<size_t>(l)].rope.freq_factors =
        w.rope_freqs.empty() ? nullptr : reinterpret_cast<const float*>(w.rope_freqs.data);
  }
  b.set_forward(&forward_decoder);
  return Status::ok();
}

}  // namespace ox
