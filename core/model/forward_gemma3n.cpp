// The forward pass of gemma3n (llama.cpp's src/models/gemma3n.cpp). The residual is kAltup streams
// S_0..S_3 (S_0 active). Each layer predicts every stream from all of them, runs the active
// prediction through attention + LAuReL and a (first layers: sparse) GeGLU, corrects every
// prediction by the active one's change, and adds the per-layer input's branch to the inactive
// streams. At the end the streams are projected back and averaged.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/model/forward_gemma.h"
#include "core/model/gemma3n.h"
#include "core/model/recurrent.h"

namespace ox {
namespace {

using gemma3n::kAltup;

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }

// sqrt(sum(x^2)) of each of n rows of d (llama.cpp's calc_magnitude).
float magnitude(const float* x, int64_t d) {
  double s = 0;
  for (int64_t i = 0; i < d; ++i) s += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(std::sqrt(s));
}

// y = W x for each row, then rescaled to x_ref's magnitude: the projection of a stream to or from
// the active one's scale (n rows of d).
void project_to_magnitude(OpContext& ops, const Tensor& w, const float* x, const float* x_ref, int64_t n, int64_t d,
                          float* y) {
  matmul(ops, w, x, n, y);
  for (int64_t t = 0; t < n; ++t) {
    const float target = magnitude(x_ref + t * d, d), now = magnitude(y + t * d, d);
    for (int64_t i = 0; i < d; ++i) y[t * d + i] = y[t * d + i] * target / now;
  }
}

// modalities[n, kAltup] = tanh(W_router (rmsnorm(x) * router_norm / n_embd)); scratch: [n, n_embd].
void router_modalities(const Model& m, ForwardState& st, const LayerWeights& L, const float* x, int64_t n, float* scratch,
                       float* modalities) {
  const HParams& hp = m.hparams();
  rms_norm(x, f32(L.altup_router_norm), hp.n_embd, n, hp.rms_eps, scratch);
  scale(scratch, 1.0f / static_cast<float>(hp.n_embd), n * hp.n_embd);
  matmul(st.ops, L.altup_router, scratch, n, modalities);
  for (int64_t i = 0; i < n * kAltup; ++i) modalities[i] = std::tanh(modalities[i]);
}

// P_j = S_j + sum_k c[j][k] S_k, c = W_predict modalities(S_0) (per token, kAltup x kAltup).
void altup_predict(const Model& m, ForwardState& st, const LayerWeights& L, const float* s, int64_t n, float* p) {
  const int64_t d = m.hparams().n_embd;
  float* modalities = st.gate.data();  // [n, kAltup]
  float* coefs = st.up.data();         // [n, kAltup * kAltup]
  router_modalities(m, st, L, s, n, st.h.data(), modalities);
  matmul(st.ops, L.altup_predict_coef, modalities, n, coefs);
  std::memcpy(p, s, sizeof(float) * static_cast<size_t>(kAltup * n * d));
  for (int j = 0; j < kAltup; ++j) {
    for (int64_t t = 0; t < n; ++t) {
      float* pj = p + (j * n + t) * d;
      for (int k = 0; k < kAltup; ++k) {
        const float c = coefs[t * kAltup * kAltup + j * kAltup + k];
        const float* sk = s + (k * n + t) * d;
        for (int64_t i = 0; i < d; ++i) pj[i] += c * sk[i];
      }
    }
  }
}

// S_j = P_j + (active - P_0) * (1 + c_j), c = W_correct modalities(active).
void altup_correct(const Model& m, ForwardState& st, const LayerWeights& L, const float* p, const float* active, int64_t n,
                   float* s) {
  const int64_t d = m.hparams().n_embd;
  float* modalities = st.gate.data();  // [n, kAltup]
  float* coefs = st.up.data();         // [n, kAltup]
  router_modalities(m, st, L, active, n, st.h.data(), modalities);
  matmul(st.ops, L.altup_correct_coef, modalities, n, coefs);
  for (int j = 0; j < kAltup; ++j) {
    for (int64_t t = 0; t < n; ++t) {
      const float c = coefs[t * kAltup + j] + 1.0f;
      for (int64_t i = 0; i < d; ++i) {
        const float innovation = active[t * d + i] - p[t * d + i];
        s[(j * n + t) * d + i] = innovation * c + p[(j * n + t) * d + i];
      }
    }
  }
}

// out = rmsnorm(W_r W_l h) * laurel_post_norm + h; scratch: [n, laurel rank].
void laurel(const Model& m, ForwardState& st, const LayerWeights& L, const float* h, int64_t n, float* scratch, float* out) {
  const HParams& hp = m.hparams();
  matmul(st.ops, L.laurel_l, h, n, scratch);
  matmul(st.ops, L.laurel_r, scratch, n, out);
  rms_norm(out, f32(L.laurel_post_norm), hp.n_embd, n, hp.rms_eps, out);
  add(out, h, n * hp.n_embd);
}

// Activation sparsity (llama.cpp's gaussian_topk): each row of n_ff keeps what exceeds its mean by
// kSparsityStdMul standard deviations (sample deviation), shifted down by that cut-off.
void gaussian_topk(float* x, int64_t n_ff, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    float* row = x + t * n_ff;
    double sum = 0;
    for (int64_t i = 0; i < n_ff; ++i) sum += row[i];
    const float mean = static_cast<float>(sum / static_cast<double>(n_ff));
    double sq = 0;
    for (int64_t i = 0; i < n_ff; ++i) sq += static_cast<double>(row[i] - mean) * (row[i] - mean);
    const float std_dev = static_cast<float>(std::sqrt(sq / static_cast<double>(n_ff - 1)));
    const float cutoff = mean + std_dev * gemma3n::kSparsityStdMul;
    for (int64_t i = 0; i < n_ff; ++i) row[i] = std::max(0.0f, row[i] - cutoff);
  }
}

// out = W_down (gelu(sparse?(W_gate h)) * W_up h)
void feed_forward(const Model& m, ForwardState& st, int l, const float* h, int64_t n, float* out) {
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t ff = L.ffn_gate.rows;
  float* gate = st.gate.data();  // [n, ff]
  float* up = st.up.data();      // [n, ff]
  matmul(st.ops, L.ffn_gate, h, n, gate);
  matmul(st.ops, L.ffn_up, h, n, up);
  if (l < gemma3n::kSparseLayers) gaussian_topk(gate, ff, n);
  gelu_in_place(st, gate, n * ff);
  for (int64_t i = 0; i < n * ff; ++i) gate[i] *= up[i];
  matmul(st.ops, L.ffn_down, gate, n, out);
}

}  // namespace

void forward_gemma3n(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* s = st.altup.data();                 // [kAltup, n, d] the streams
  float* p = s + kAltup * n * d;              // [kAltup, n, d] their predictions
  float* x = st.x.data();                     // [n, d] attention + LAuReL, then the corrected input
  float* h = st.h.data();                     // [n, d] normalised input of a sub-block
  float* att = st.proj.data();                // [n, d] attention output
  float* lau = st.h2.data();                  // [n, d] LAuReL's output
  float* ffn = st.ffn_out.data();             // [n, d] feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, s + t * d);
  scale(s, std::sqrt(static_cast<float>(d)), n * d);
  gemma_per_layer_inputs(m, st, batch, s, st.per_layer.data());
  for (int j = 1; j < kAltup; ++j) project_to_magnitude(st.ops, w.altup_proj.matrix(j - 1), s, s, n, d, s + j * n * d);

  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    altup_predict(m, st, L, s, n, p);
    const float* active = p;  // P_0
    rms_norm(active, f32(L.attn_norm), d, n, hp.rms_eps, h);
    laurel(m, st, L, h, n, st.gate.data(), lau);
    gemma_attention(m, st, l, h, runs, n, att);
    rms_norm(att, f32(L.attn_post_norm), d, n, hp.rms_eps, att);
    add(att, active, n * d);
    for (int64_t i = 0; i < n * d; ++i) x[i] = (att[i] + lau[i]) * (1.0f / std::sqrt(2.0f));
    rms_norm(x, f32(L.ffn_norm), d, n, hp.rms_eps, h);
    feed_forward(m, st, l, h, n, ffn);
    rms_norm(ffn, f32(L.ffn_post_norm), d, n, hp.rms_eps, ffn);
    add(ffn, x, n * d);
    altup_correct(m, st, L, p, ffn, n, s);
    // The inactive streams gain the per-layer input's branch of the active one (scaled).
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < d; ++i) x[t * d + i] = s[t * d + i] * f32(L.altup_correct_scale)[i];
    }
    gemma_per_layer_branch(m, st, l, x, n, att);
    for (int j = 1; j < kAltup; ++j) add(s + j * n * d, att, n * d);
  }

  // x = (S_0 + sum_j unembed_j(S_j) at S_0's magnitude) / kAltup
  std::memcpy(x, s, sizeof(float) * static_cast<size_t>(n * d));
  for (int j = 1; j < kAltup; ++j) {
    project_to_magnitude(st.ops, w.altup_unembd_proj.matrix(j - 1), s + j * n * d, s, n, d, p);
    add(x, p, n * d);
  }
  scale(x, 1.0f / static_cast<float>(kAltup), n * d);
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
