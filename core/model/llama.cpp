// Llama (and Llama-2/3, TinyLlama, Mistral without SWA): RMSNorm, RoPE (adjacent pairs),
// grouped-query attention over the KV cache, SwiGLU feed-forward, tied or separate output.
#include <cmath>
#include <cstring>

#include "core/model/archs.h"
#include "core/ops/attention.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return reinterpret_cast<const float*>(t.data); }

void forward_llama(const Model& m, ForwardState& st, std::span<const int32_t> tokens, int64_t pos0,
                   bool all_logits, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  OpContext& ops = st.ops;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t d = hp.n_embd;
  const int k_dim = hp.n_head_kv * hp.head_dim_k;
  const int v_dim = hp.n_head_kv * hp.head_dim_v;
  float* x = st.x.data();  // [n, d]
  float* h = st.h.data();  // [n, d]

  RopeParams rope_p;
  rope_p.style = RopeStyle::kNorm;
  rope_p.n_rot = hp.n_rot;
  rope_p.freq_base = hp.rope_freq_base;
  rope_p.freq_scale = hp.rope_freq_scale;
  rope_p.freq_factors = w.rope_freqs.empty() ? nullptr : f32(w.rope_freqs);

  AttentionParams att_p;
  att_p.n_head = hp.n_head;
  att_p.n_head_kv = hp.n_head_kv;
  att_p.head_dim_k = hp.head_dim_k;
  att_p.head_dim_v = hp.head_dim_v;
  att_p.scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));

  // x = token_embd[tokens]
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, tokens[t], x + t * d);

  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[l];
    // Attention: h = rmsnorm(x) * attn_norm; q, k, v = h Wq, h Wk, h Wv; rotate q and k.
    rms_norm(x, f32(L.attn_norm), d, n, hp.rms_eps, h);
    matmul(ops, L.wq, h, n, st.q.data());
    matmul(ops, L.wk, h, n, st.k.data());
    matmul(ops, L.wv, h, n, st.v.data());
    rope(st.q.data(), n, hp.n_head, hp.head_dim_k, pos0, rope_p);
    rope(st.k.data(), n, hp.n_head_kv, hp.head_dim_k, pos0, rope_p);
    std::memcpy(st.kv.k(l, pos0), st.k.data(), sizeof(float) * n * k_dim);
    std::memcpy(st.kv.v(l, pos0), st.v.data(), sizeof(float) * n * v_dim);
    // att = softmax(q K^T / sqrt(head_dim)) V over positions 0..pos; x += att Wo
    attention(ops, st.q.data(), n, pos0, st.kv.k(l, 0), k_dim, st.kv.v(l, 0), v_dim, att_p, st.att.data());
    matmul(ops, L.wo, st.att.data(), n, st.proj.data());
    add(x, st.proj.data(), n * d);

    // Feed-forward (SwiGLU): x += (silu(h Wgate) * (h Wup)) Wdown, h = rmsnorm(x) * ffn_norm
    rms_norm(x, f32(L.ffn_norm), d, n, hp.rms_eps, h);
    matmul(ops, L.ffn_gate, h, n, st.gate.data());
    matmul(ops, L.ffn_up, h, n, st.up.data());
    silu_mul(st.gate.data(), st.up.data(), n * hp.n_ff);
    matmul(ops, L.ffn_down, st.gate.data(), n, st.proj.data());
    add(x, st.proj.data(), n * d);
  }

  // logits = rmsnorm(x) * output_norm, times output (only the last row unless all_logits)
  const int64_t first = all_logits ? 0 : n - 1;
  rms_norm(x + first * d, f32(w.output_norm), d, n - first, hp.rms_eps, h);
  matmul(ops, w.output, h, n - first, logits);
}

}  // namespace

Status load_llama(ModelBuilder& b) {
  const HParams& hp = b.hp();
  ModelWeights& w = b.weights();
  const int64_t d = hp.n_embd;
  if (hp.n_vocab <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: vocabulary size unknown (no llama.vocab_size, no "
                                                 "tokenizer.ggml.tokens)", b.file().name().c_str()));
  }
  OX_ASSIGN_OR_RETURN(w.token_embd, b.matrix("token_embd.weight", d, hp.n_vocab));
  OX_ASSIGN_OR_RETURN(w.output_norm, b.vector("output_norm.weight", d));
  // Tied embeddings: without output.weight the embedding matrix doubles as the output projection.
  OX_ASSIGN_OR_RETURN(w.output, b.optional_matrix("output.weight", d, hp.n_vocab));
  if (w.output.empty()) w.output = w.token_embd;
  OX_ASSIGN_OR_RETURN(w.rope_freqs, b.optional_vector("rope_freqs.weight", hp.n_rot / 2));

  const int64_t q_dim = static_cast<int64_t>(hp.n_head) * hp.head_dim_k;
  const int64_t k_dim = static_cast<int64_t>(hp.n_head_kv) * hp.head_dim_k;
  const int64_t v_dim = static_cast<int64_t>(hp.n_head_kv) * hp.head_dim_v;
  w.layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = w.layers[l];
    OX_ASSIGN_OR_RETURN(L.attn_norm, b.vector(layer_name(l, "attn_norm"), d));
    OX_ASSIGN_OR_RETURN(L.wq, b.matrix(layer_name(l, "attn_q"), d, q_dim));
    OX_ASSIGN_OR_RETURN(L.wk, b.matrix(layer_name(l, "attn_k"), d, k_dim));
    OX_ASSIGN_OR_RETURN(L.wv, b.matrix(layer_name(l, "attn_v"), d, v_dim));
    OX_ASSIGN_OR_RETURN(L.wo, b.matrix(layer_name(l, "attn_output"), q_dim, d));
    OX_ASSIGN_OR_RETURN(L.ffn_norm, b.vector(layer_name(l, "ffn_norm"), d));
    OX_ASSIGN_OR_RETURN(L.ffn_gate, b.matrix(layer_name(l, "ffn_gate"), d, hp.n_ff));
    OX_ASSIGN_OR_RETURN(L.ffn_up, b.matrix(layer_name(l, "ffn_up"), d, hp.n_ff));
    OX_ASSIGN_OR_RETURN(L.ffn_down, b.matrix(layer_name(l, "ffn_down"), hp.n_ff, d));
  }
  b.set_forward(&forward_llama);
  return Status::ok();
}

}  // namespace ox
