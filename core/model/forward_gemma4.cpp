// The forward pass of gemma4 (llama.cpp's src/models/gemma4.cpp): per-layer head shapes and K/V
// reuse in attention, V heads RMS-normalised, a dense GeGLU beside an optional expert branch, the
// per-layer token inputs added after each block, a scalar per layer, a final soft-cap.
#include <cmath>
#include <cstring>

#include "core/model/forward_gemma.h"
#include "core/model/moe.h"
#include "core/model/recurrent.h"
#include "core/ops/attention.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }

}  // namespace

void rms_normalise(float* x, int64_t n, int64_t n_rows, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    double sum_sq = 0;
    for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
    for (int64_t i = 0; i < n; ++i) xr[i] *= inv;
  }
}

void gelu_in_place(const ForwardState& st, float* x, int64_t n) {
  st.numerics == Numerics::kLlamaCpp ? gelu_f16(x, n) : gelu(x, n);
}

void gemma_per_layer_inputs(const Model& m, ForwardState& st, std::span<const BatchToken> batch, const float* x, float* out) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size()), n_pl = hp.n_embd_per_layer, width = n_pl * hp.n_layer;
  matmul(st.ops, w.per_layer_model_proj, x, n, out);
  scale(out, 1.0f / std::sqrt(static_cast<float>(hp.n_embd)), n * width);
  rms_norm(out, f32(w.per_layer_proj_norm), n_pl, n * hp.n_layer, hp.rms_eps, out);
  float* row = out + n * width;  // [width] one token's table row, after the inputs
  for (int64_t t = 0; t < n; ++t) {
    get_row(w.per_layer_token_embd, batch[static_cast<size_t>(t)].token, row);
    scale(row, std::sqrt(static_cast<float>(n_pl)), width);
    add(out + t * width, row, width);
  }
  scale(out, 1.0f / std::sqrt(2.0f), n * width);
}

void gemma_attention(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                     float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const LayerAttention& la = m.layers()[static_cast<size_t>(l)];
  OpContext& ops = st.ops;
  const int hd = la.head_dim_k;
  const int64_t q_dim = int64_t{hp.n_head} * hd, kv_dim = int64_t{la.n_head_kv} * hd;
  float* q = st.q.data();  // [n, q_dim]
  float* k = st.k.data();  // [n, kv_dim]
  float* v = st.v.data();  // [n, kv_dim]
  matmul(ops, L.wq, h, n, q);
  rms_norm(q, f32(L.q_norm), hd, n * hp.n_head, hp.rms_eps, q);
  for (const SeqRun& r : runs) rope(q + r.t0 * q_dim, r.n, hp.n_head, hd, r.pos0, la.rope);
  if (la.stores_kv) {
    matmul(ops, L.wk, h, n, k);
    if (L.wv.empty()) {  // attention_k_eq_v: V is K's projection
      std::memcpy(v, k, sizeof(float) * static_cast<size_t>(n * kv_dim));
    } else {
      matmul(ops, L.wv, h, n, v);
    }
    rms_norm(k, f32(L.k_norm), hd, n * la.n_head_kv, hp.rms_eps, k);
    rms_normalise(v, hd, n * la.n_head_kv, hp.rms_eps);
    for (const SeqRun& r : runs) rope(k + r.t0 * kv_dim, r.n, la.n_head_kv, hd, r.pos0, la.rope);
    const FromFloatFn store_k = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_k())];
    const FromFloatFn store_v = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_v())];
    for (const SeqRun& r : runs) {
      for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
        store_k(k + t * kv_dim, st.kv.k(la.kv_layer, r.seq, r.pos0 + (t - r.t0)), kv_dim);
        store_v(v + t * kv_dim, st.kv.v(la.kv_layer, r.seq, r.pos0 + (t - r.t0)), kv_dim);
      }
    }
  }
  AttentionParams p;
  p.n_head = hp.n_head;
  p.n_head_kv = la.n_head_kv;
  p.head_dim_k = p.head_dim_v = hd;
  p.scale = m.spec().attn_scale;
  p.window = la.window;
  p.f16_accumulator = st.numerics == Numerics::kLlamaCpp;
  float* att = st.att.data();  // [n, q_dim]
  for (const SeqRun& r : runs) {
    ox::attention(ops, q + r.t0 * q_dim, r.n, r.pos0, st.kv.layer_view(la.kv_layer, r.seq), p, att + r.t0 * q_dim);
  }
  matmul(ops, L.wo, att, n, out);
}

void gemma_per_layer_branch(const Model& m, ForwardState& st, int l, const float* in, int64_t n, float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t n_pl = hp.n_embd_per_layer;
  float* inp_pl = st.per_layer.data();          // [n, n_layer, n_pl]
  float* g = inp_pl + n * hp.n_layer * n_pl;    // [n, n_pl] after the inputs
  matmul(st.ops, L.per_layer_inp_gate, in, n, g);
  gelu_in_place(st, g, n * n_pl);
  for (int64_t t = 0; t < n; ++t) {
    const float* layer_in = inp_pl + (t * hp.n_layer + l) * n_pl;
    for (int64_t i = 0; i < n_pl; ++i) g[t * n_pl + i] *= layer_in[i];
  }
  matmul(st.ops, L.per_layer_proj, g, n, out);
  rms_norm(out, f32(L.per_layer_post_norm), hp.n_embd, n, hp.rms_eps, out);
}

namespace {

// out = (gelu(h Wgate) * h Wup) Wdown, the layer's own width (feed_forward_length per layer).
void geglu(ForwardState& st, const LayerWeights& L, const float* h, int64_t n, float* out) {
  const int64_t ff = L.ffn_gate.rows;
  float* gate = st.gate.data();  // [n, ff]
  float* up = st.up.data();      // [n, ff]
  if (same_activations(L.ffn_gate, L.ffn_up)) {
    const MatmulOutput outs[2] = {{&L.ffn_gate, gate, ff}, {&L.ffn_up, up, ff}};
    matmul_many(st.ops, outs, h, n);
  } else {
    matmul(st.ops, L.ffn_gate, h, n, gate);
    matmul(st.ops, L.ffn_up, h, n, up);
  }
  st.numerics == Numerics::kLlamaCpp ? gelu_mul_f16(gate, up, n * ff) : gelu_mul(gate, up, n * ff);
  matmul(st.ops, L.ffn_down, gate, n, out);
}

// The feed-forward of layer l on the residual x [n, n_embd] into out: the dense GeGLU, and where
// the layer has experts, post_ffw_norm_1(dense) + post_ffw_norm_2(experts(pre_ffw_norm_2(x))),
// routed on rmsnorm(x) / sqrt(n_embd) * ffn_gate_inp.scale.
void feed_forward(const Model& m, ForwardState& st, int l, const float* x, int64_t n, float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t d = hp.n_embd;
  float* h = st.h.data();
  rms_norm(x, f32(L.ffn_norm), d, n, hp.rms_eps, h);
  geglu(st, L, h, n, out);
  if (!moe_layer(m.spec(), hp, l)) return;
  rms_norm(out, f32(L.ffn_post_norm_1), d, n, hp.rms_eps, out);
  float* router_in = st.proj.data();  // [n, d]
  std::memcpy(router_in, x, sizeof(float) * static_cast<size_t>(n * d));
  rms_normalise(router_in, d, n, hp.rms_eps);
  scale(router_in, 1.0f / std::sqrt(static_cast<float>(d)), n * d);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < d; ++i) router_in[t * d + i] *= f32(L.ffn_gate_inp_s)[i];
  }
  rms_norm(x, f32(L.ffn_pre_norm_2), d, n, hp.rms_eps, h);
  float* experts = st.h2.data();  // [n, d]
  moe_ffn(m, st, L, h, n, experts, router_in);
  rms_norm(experts, f32(L.ffn_post_norm_2), d, n, hp.rms_eps, experts);
  add(out, experts, n * d);
}

}  // namespace

void forward_gemma4(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd, n_pl = hp.n_embd_per_layer;
  float* x = st.x.data();          // [n, d] residual stream
  float* h = st.h.data();          // [n, d] normalised input of a sub-block
  float* att = st.proj.data();     // [n, d] attention output
  float* ffn = st.ffn_out.data();  // [n, d] feed-forward output
  float* inp_pl = st.per_layer.data();  // [n, n_layer, n_pl] per-layer inputs

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  scale(x, std::sqrt(static_cast<float>(d)), n * d);
  if (n_pl > 0) gemma_per_layer_inputs(m, st, batch, x, inp_pl);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, f32(L.attn_norm), d, n, hp.rms_eps, h);
    gemma_attention(m, st, l, h, runs, n, att);
    rms_norm(att, f32(L.attn_post_norm), d, n, hp.rms_eps, att);
    add(x, att, n * d);
    feed_forward(m, st, l, x, n, ffn);
    rms_norm(ffn, f32(L.ffn_post_norm), d, n, hp.rms_eps, ffn);
    add(x, ffn, n * d);
    if (n_pl > 0) {  // x += the per-layer input's branch
      gemma_per_layer_branch(m, st, l, x, n, att);
      add(x, att, n * d);
    }
    if (!L.out_scale.empty()) scale(x, f32(L.out_scale)[0], n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
