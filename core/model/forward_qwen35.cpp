// The forward pass of qwen35 and qwen35moe (llama.cpp's src/models/qwen35.cpp, qwen35moe.cpp,
// delta-net-base.cpp): a hybrid of gated delta net layers and gated attention layers (every
// full_attention_interval-th). Each layer: x += mixer(rmsnorm(x)); x += ffn(rmsnorm_post(x)), the
// ffn dense SwiGLU or, where the spec has experts (qwen35moe), moe.cpp's. Text positions make its
// interleaved M-RoPE the NEOX rotation of the first n_rot dimensions.
#include <cmath>
#include <cstring>

#include "core/model/decoder_load.h"
#include "core/model/recurrent.h"
#include "core/model/tensor_plan.h"
#include "core/ops/attention.h"
#include "core/ops/delta_net.h"
#include "core/ops/ssm.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

void linear(OpContext& ops, const Tensor& w, const Tensor& b, const float* x, int64_t n, float* y) {
  matmul(ops, w, x, n, y);
  if (!b.empty()) add_bias(y, f32(b), w.rows, n);
}

// Attention whose q projection also yields a sigmoid gate on its output (per head [q | gate]).
void gated_attention(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                     float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const LayerAttention& la = m.layers()[static_cast<size_t>(l)];
  OpContext& ops = st.ops;
  const int64_t hd = hp.head_dim_k, q_dim = hp.n_head * hd, kv_dim = hp.n_head_kv * hd;
  float* qg = st.mixer.data();  // [n, 2 q_dim]: per head q | gate
  float* q = st.q.data();
  float* k = st.k.data();
  float* v = st.v.data();
  linear(ops, L.wq, L.bq, h, n, qg);
  linear(ops, L.wk, L.bk, h, n, k);
  linear(ops, L.wv, L.bv, h, n, v);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t head = 0; head < hp.n_head; ++head) {
      std::memcpy(q + t * q_dim + head * hd, qg + t * 2 * q_dim + head * 2 * hd, sizeof(float) * static_cast<size_t>(hd));
    }
  }
  rms_norm(q, f32(L.q_norm), hd, n * hp.n_head, hp.rms_eps, q);
  rms_norm(k, f32(L.k_norm), hd, n * hp.n_head_kv, hp.rms_eps, k);
  for (const SeqRun& r : runs) {
    rope(q + r.t0 * q_dim, r.n, hp.n_head, static_cast<int>(hd), r.pos0, la.rope);
    rope(k + r.t0 * kv_dim, r.n, hp.n_head_kv, static_cast<int>(hd), r.pos0, la.rope);
  }
  const FromFloatFn store_k = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_k())];
  const FromFloatFn store_v = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_v())];
  for (const SeqRun& r : runs) {
    for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
      store_k(k + t * kv_dim, st.kv.k(l, r.seq, r.pos0 + (t - r.t0)), kv_dim);
      store_v(v + t * kv_dim, st.kv.v(l, r.seq, r.pos0 + (t - r.t0)), kv_dim);
    }
  }
  AttentionParams p;
  p.n_head = hp.n_head;
  p.n_head_kv = hp.n_head_kv;
  p.head_dim_k = p.head_dim_v = static_cast<int>(hd);
  p.scale = m.spec().attn_scale > 0 ? m.spec().attn_scale : 1.0f / std::sqrt(static_cast<float>(hd));
  p.window = la.window;
  p.f16_accumulator = st.numerics == Numerics::kLlamaCpp;
  float* att = st.att.data();
  for (const SeqRun& r : runs) {
    attention(ops, q + r.t0 * q_dim, r.n, r.pos0, st.kv.layer_view(l, r.seq), p, att + r.t0 * q_dim);
  }
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < q_dim; ++i) {
      att[t * q_dim + i] *= sigmoid(qg[t * 2 * q_dim + (i / hd) * 2 * hd + hd + i % hd]);
    }
  }
  matmul(ops, L.wo, att, n, out);
}

// x / sqrt(sum(x^2) + eps) over rows of s (llama.cpp's build_gdn_l2_norm).
void l2_norm_rows(float* x, int64_t s, int64_t n_rows, int64_t stride, int64_t per_row, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t h = 0; h < per_row; ++h) {
      float* v = x + r * stride + h * s;
      double sum = 0;
      for (int64_t i = 0; i < s; ++i) sum += double{v[i]} * v[i];
      const float inv = static_cast<float>(1.0 / std::sqrt(sum + eps));
      for (int64_t i = 0; i < s; ++i) v[i] *= inv;
    }
  }
}

// The gated delta net: q k v through a causal convolution, the delta rule per value head, an
// RMSNorm per head gated by silu(z), the output projection.
void delta_net(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
               float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  OpContext& ops = st.ops;
  const int64_t S = hp.ssm_d_state, n_k = hp.ssm_n_group, n_v = hp.ssm_dt_rank;
  const int64_t key_dim = S * n_k, value_dim = hp.ssm_d_inner, conv_dim = 2 * key_dim + value_dim;
  float* qkv = st.mixer.data();    // [n, conv_dim]
  float* xc = qkv + n * conv_dim;  // [n, conv_dim] after the convolution
  float* z = xc + n * conv_dim;    // [n, value_dim]
  float* beta = z + n * value_dim;  // [n, n_v]
  float* g = beta + n * n_v;        // [n, n_v]
  float* o = g + n * n_v;           // [n, value_dim]
  matmul(ops, L.wq, h, n, qkv);
  matmul(ops, L.attn_gate, h, n, z);
  matmul(ops, L.ssm_beta, h, n, beta);
  matmul(ops, L.ssm_alpha, h, n, g);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < n_v; ++i) {
      beta[t * n_v + i] = sigmoid(beta[t * n_v + i]);
      g[t * n_v + i] = softplus(g[t * n_v + i] + f32(L.ssm_dt_b)[i]) * f32(L.ssm_a)[i];
    }
  }
  for (const SeqRun& r : runs) {
    ssm_conv(st.kv.rs().conv(l, r.seq), qkv + r.t0 * conv_dim, conv_dim, f32(L.ssm_conv1d), conv_dim, hp.ssm_d_conv,
             r.n, xc + r.t0 * conv_dim, conv_dim);
  }
  silu(xc, n * conv_dim);
  l2_norm_rows(xc, S, n, conv_dim, 2 * n_k, hp.rms_eps);  // q and k heads, adjacent
  for (const SeqRun& r : runs) {
    const float* x = xc + r.t0 * conv_dim;
    const DeltaNetInput in{x, x + key_dim, conv_dim, x + 2 * key_dim, conv_dim, g + r.t0 * n_v, beta + r.t0 * n_v};
    gated_delta_rule(st.kv.rs().ssm(l, r.seq), in, static_cast<int>(n_v), static_cast<int>(n_k), static_cast<int>(S),
                     r.n, o + r.t0 * value_dim, value_dim);
  }
  const int64_t head_v = value_dim / n_v;
  rms_norm(o, f32(L.ssm_norm), head_v, n * n_v, hp.rms_eps, o);
  silu(z, n * value_dim);
  for (int64_t i = 0; i < n * value_dim; ++i) o[i] *= z[i];
  matmul(ops, L.ssm_out, o, n, out);
}

}  // namespace

void forward_qwen35(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();          // [n, d] residual stream
  float* h = st.h.data();          // [n, d] normalised input of a sub-block
  float* mix = st.proj.data();     // [n, d] mixer output
  float* ffn = st.ffn_out.data();  // [n, d] feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, f32(L.attn_norm), d, n, hp.rms_eps, h);
    if (is_recurrent_layer(m.spec(), hp, l)) {
      delta_net(m, st, l, h, runs, n, mix);
    } else {
      gated_attention(m, st, l, h, runs, n, mix);
    }
    add(x, mix, n * d);
    rms_norm(x, f32(L.attn_post_norm), d, n, hp.rms_eps, h);
    decoder_ffn(m, st, l, h, n, ffn);  // spec.moe: routed experts + the sigmoid-gated shared expert
    add(x, ffn, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
