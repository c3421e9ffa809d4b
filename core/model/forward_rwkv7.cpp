// The forward pass of RWKV-7 (llama.cpp's src/models/rwkv7.cpp, rwkv7-base.cpp). Each layer:
// a time mix (token shift, low-rank decay / learning-rate / value-residual / gate maps, the wkv7
// state update, a group norm per head) and a channel mix (token shift, squared ReLU), each after a
// LayerNorm with bias. The state per sequence: both token shifts and every head's wkv7 matrix.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/model/recurrent.h"
#include "core/ops/wkv7.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return reinterpret_cast<const float*>(t.data); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

void layer_norm_rows(const Model& m, const Tensor& w, const Tensor& b, const float* x, int64_t n, float* out) {
  layer_norm(x, f32(w), f32(b), m.hparams().n_embd, n, m.hparams().norm_eps, out);
}

// prev[t] = the normalised input of the token before t in its sequence: the saved shift for the
// first token of a run, then the run's own rows; the shift becomes the run's last row.
void token_shift(ForwardState& st, int l, int which, const float* cur, std::span<const SeqRun> runs, int64_t d,
                 float* prev) {
  for (const SeqRun& r : runs) {
    float* shift = st.kv.rs().conv(l, r.seq) + which * d;
    std::memcpy(prev + r.t0 * d, shift, sizeof(float) * static_cast<size_t>(d));
    if (r.n > 1) std::memcpy(prev + (r.t0 + 1) * d, cur + r.t0 * d, sizeof(float) * static_cast<size_t>((r.n - 1) * d));
    std::memcpy(shift, cur + (r.t0 + r.n - 1) * d, sizeof(float) * static_cast<size_t>(d));
  }
}

// y = W2 f(W1 x) (+ b): a low-rank map, f applied between (tanh, sigmoid or none).
enum class Between { kNone, kTanh, kSigmoid };
void low_rank(OpContext& ops, const Tensor& w1, const Tensor& w2, Between f, const float* x, int64_t n, float* tmp,
              float* y) {
  matmul(ops, w1, x, n, tmp);
  const int64_t count = n * w1.rows;
  for (int64_t i = 0; i < count; ++i) {
    if (f == Between::kTanh) tmp[i] = std::tanh(tmp[i]);
    if (f == Between::kSigmoid) tmp[i] = sigmoid(tmp[i]);
  }
  matmul(ops, w2, tmp, n, y);
}

struct Scratch {
  float *v_first, *prev, *mix, *r, *w, *k, *v, *a, *g, *kk, *y, *tmp;
};

Scratch carve(ForwardState& st, int64_t n, int64_t d) {
  float* p = st.mixer.data();
  auto take = [&](int64_t count) {
    float* q = p;
    p += n * count;
    return q;
  };
  Scratch s;
  s.v_first = take(d);
  s.prev = take(d);
  s.mix = take(6 * d);
  s.r = take(d);
  s.w = take(d);
  s.k = take(d);
  s.v = take(d);
  s.a = take(d);
  s.g = take(d);
  s.kk = take(d);
  s.y = take(d);
  s.tmp = p;  // n x the largest low-rank size
  return s;
}

void time_mix(const Model& m, ForwardState& st, int l, const float* cur, std::span<const SeqRun> runs, int64_t n,
              Scratch& s, float* out) {
  const HParams& hp = m.hparams();
  const Rwkv7Weights& R = m.weights().layers[static_cast<size_t>(l)].rwkv;
  OpContext& ops = st.ops;
  const int64_t d = hp.n_embd, hs = hp.wkv_head_size, n_head = d / hs;
  token_shift(st, l, 0, cur, runs, d, s.prev);
  // The six token-shift mixes: x + (prev - x) * lerp[c], for r, w, k, v, a, g.
  const float* lerp = f32(R.lerp_fused);
  for (int c = 0; c < 6; ++c) {
    float* xc = s.mix + c * n * d;
    for (int64_t i = 0; i < n * d; ++i) xc[i] = cur[i] + (s.prev[i] - cur[i]) * lerp[c * d + i % d];
  }
  const float *xr = s.mix, *xw = s.mix + n * d, *xk = s.mix + 2 * n * d, *xv = s.mix + 3 * n * d,
              *xa = s.mix + 4 * n * d, *xg = s.mix + 5 * n * d;
  matmul(ops, R.receptance, xr, n, s.r);
  // decay: w = exp(-0.606531 * sigmoid(W2 tanh(W1 xw) + w0)), in (0.545, 1)
  low_rank(ops, R.w1, R.w2, Between::kTanh, xw, n, s.tmp, s.w);
  for (int64_t i = 0; i < n * d; ++i) s.w[i] = std::exp(-0.606531f * sigmoid(s.w[i] + f32(R.w0)[i % d]));
  matmul(ops, R.key, xk, n, s.k);
  matmul(ops, R.value, xv, n, s.v);
  if (l == 0) {
    std::memcpy(s.v_first, s.v, sizeof(float) * static_cast<size_t>(n * d));
  } else {  // value residual: v += (v_first - v) * sigmoid(V2 V1 xv + v0)
    low_rank(ops, R.v1, R.v2, Between::kNone, xv, n, s.tmp, s.y);
    for (int64_t i = 0; i < n * d; ++i) s.v[i] += (s.v_first[i] - s.v[i]) * sigmoid(s.y[i] + f32(R.v0)[i % d]);
  }
  low_rank(ops, R.g1, R.g2, Between::kSigmoid, xg, n, s.tmp, s.g);
  // in-context learning rate a = sigmoid(A2 A1 xa + a0)
  low_rank(ops, R.a1, R.a2, Between::kNone, xa, n, s.tmp, s.a);
  for (int64_t i = 0; i < n * d; ++i) s.a[i] = sigmoid(s.a[i] + f32(R.a0)[i % d]);
  // kk = l2norm per head of k * k_k; k += k * k_a * (a - 1)
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      float* kk = s.kk + t * d + h * hs;
      const float* k = s.k + t * d + h * hs;
      double sum = 0;
      for (int64_t i = 0; i < hs; ++i) {
        kk[i] = k[i] * f32(R.k_k)[h * hs + i];
        sum += double{kk[i]} * kk[i];
      }
      const float scale = 1.0f / std::max(std::sqrt(static_cast<float>(sum)), 1e-12f);
      for (int64_t i = 0; i < hs; ++i) kk[i] *= scale;
    }
  }
  for (int64_t i = 0; i < n * d; ++i) {
    const float ka = s.k[i] * f32(R.k_a)[i % d];
    s.k[i] += s.a[i] * ka - ka;
  }
  // wkv7 with a = -kk, b = kk * a (both into the mix buffer, free now)
  float* neg_kk = s.mix;
  float* kk_a = s.mix + n * d;
  for (int64_t i = 0; i < n * d; ++i) {
    neg_kk[i] = -s.kk[i];
    kk_a[i] = s.kk[i] * s.a[i];
  }
  for (const SeqRun& r : runs) {
    const int64_t o = r.t0 * d;
    const Wkv7Input in{s.r + o, s.w + o, s.k + o, s.v + o, neg_kk + o, kk_a + o, d};
    wkv7(st.kv.rs().ssm(l, r.seq), in, static_cast<int>(n_head), static_cast<int>(hs), r.n, s.y + o, d);
  }
  // group norm per head (eps 64e-5), then y += v * sum(k * r * r_k) per head, times the gate
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t o = t * d + h * hs;
      layer_norm(s.y + o, f32(R.ln) + h * hs, f32(R.ln_b) + h * hs, hs, 1, 64e-5f, s.y + o);
      float rk = 0.0f;
      for (int64_t i = 0; i < hs; ++i) rk += s.k[o + i] * s.r[o + i] * f32(R.r_k)[h * hs + i];
      for (int64_t i = 0; i < hs; ++i) s.y[o + i] = (s.y[o + i] + s.v[o + i] * rk) * s.g[o + i];
    }
  }
  matmul(ops, R.output, s.y, n, out);
}

// out = Wvalue relu(Wkey (x + (prev - x) * lerp_k))^2
void channel_mix(const Model& m, ForwardState& st, int l, const float* cur, std::span<const SeqRun> runs, int64_t n,
                 Scratch& s, float* out) {
  const HParams& hp = m.hparams();
  const Rwkv7Weights& R = m.weights().layers[static_cast<size_t>(l)].rwkv;
  const int64_t d = hp.n_embd;
  token_shift(st, l, 1, cur, runs, d, s.prev);
  float* xk = s.mix;
  for (int64_t i = 0; i < n * d; ++i) xk[i] = cur[i] + (s.prev[i] - cur[i]) * f32(R.cm_lerp_k)[i % d];
  float* k = st.gate.data();  // [n, n_ff]
  matmul(st.ops, R.cm_key, xk, n, k);
  for (int64_t i = 0; i < n * hp.n_ff; ++i) k[i] = k[i] > 0 ? k[i] * k[i] : 0.0f;
  matmul(st.ops, R.cm_value, k, n, out);
}

}  // namespace

void forward_rwkv7(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();  // [n, d] residual stream
  float* h = st.h.data();  // [n, d] normalised input of a mix
  float* mixed = st.proj.data();
  Scratch s = carve(st, n, d);

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, h + t * d);
  layer_norm_rows(m, w.token_embd_norm, w.token_embd_norm_b, h, n, x);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    layer_norm_rows(m, L.attn_norm, L.attn_norm_b, x, n, h);
    time_mix(m, st, l, h, runs, n, s, mixed);
    add(x, mixed, n * d);
    layer_norm_rows(m, L.ffn_norm, L.ffn_norm_b, x, n, h);
    channel_mix(m, st, l, h, runs, n, s, mixed);
    add(x, mixed, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
