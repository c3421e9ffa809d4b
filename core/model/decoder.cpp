// The generic decoder-only transformer forward pass: every architecture without a forward of its
// own runs this, steered by its ArchSpec (norm kind, residual layout, FFN kind, q/k norms, post
// norms, experts (moe.cpp), ...); optional biases are added where the file has them. A forward pass takes a batch of
// tokens of one or several sequences: the matmuls run over all of it, RoPE, K/V stores and
// attention per run of one sequence (batch.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/model/decoder_load.h"
#include "core/model/moe.h"
#include "core/ops/attention.h"
#include "core/ops/relative_bias.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }

// Rough cost of one element of the row-wise ops, in multiply-add units (parallel_rows' threshold).
constexpr int64_t kNormCost = 4, kRopeCost = 8, kGluCost = 16;

// out = norm(x) * weight (+ bias), n rows of n_embd: RMSNorm or LayerNorm as the architecture says.
void norm(const Model& m, OpContext& ops, const float* x, const Tensor& w, const Tensor& b, int64_t n, float* out) {
  const HParams& hp = m.hparams();
  const int64_t d = hp.n_embd;
  auto rows = [&](int64_t r0, int64_t r1) {
    if (m.spec().norm == NormKind::kRms) {
      rms_norm(x + r0 * d, f32(w), d, r1 - r0, hp.rms_eps, out + r0 * d);
      if (!b.empty()) add_bias(out + r0 * d, f32(b), d, r1 - r0);  // phimoe's RMSNorm has a bias
    } else {
      layer_norm(x + r0 * d, f32(w), f32(b), d, r1 - r0, hp.norm_eps, out + r0 * d);
    }
  };
  parallel_rows(ops, n, d * kNormCost, rows);
}

// x = x / sqrt(mean(x^2) + eps) for n_rows rows of n: an RMSNorm without weight (llama4's q/k norm).
void unit_rms_norm(float* x, int64_t n, int64_t n_rows, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    double sum_sq = 0;
    for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    scale(xr, static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps)), n);
  }
}

// y = x W^T (+ b): x [n, W.cols] -> y [n, W.rows]
void linear(OpContext& ops, const Tensor& w, const Tensor& b, const float* x, int64_t n, float* y) {
  matmul(ops, w, x, n, y);
  if (!b.empty()) add_bias(y, f32(b), w.rows, n);
}

// Up to three linear maps of the same input (q, k, v; gate, up) in one matmul_many call when their
// activation formats agree (a missing third has w == nullptr).
struct Linear {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;
  float* y = nullptr;
};
void linear3(OpContext& ops, const Linear& a, const Linear& b, const Linear& c, const float* x, int64_t n) {
  MatmulOutput outs[3];
  const Tensor* bias[3] = {};
  int count = 0;
  for (const Linear* l : {&a, &b, &c}) {
    if (l->w == nullptr) continue;
    if (count > 0 && !same_activations(*outs[0].w, *l->w)) {
      linear(ops, *l->w, *l->b, x, n, l->y);
      continue;
    }
    bias[count] = l->b;
    outs[count++] = MatmulOutput{l->w, l->y, l->w->rows};
  }
  matmul_many(ops, std::span<const MatmulOutput>(outs, static_cast<size_t>(count)), x, n);
  for (int i = 0; i < count; ++i) {
    if (!bias[i]->empty()) add_bias(outs[i].y, f32(*bias[i]), outs[i].w->rows, n);
  }
}

// x[t] = token_embd[batch[t].token] (* sqrt(n_embd)) (+ token_types[0]) (+ position_embd[batch[t].pos])
void embed(const Model& m, ForwardState& st, std::span<const BatchToken> batch) {
  const ModelWeights& w = m.weights();
  const int64_t d = m.hparams().n_embd;
  const int64_t n = static_cast<int64_t>(batch.size());
  float* x = st.x.data();
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  if (m.spec().embd_scale) scale(x, std::sqrt(static_cast<float>(d)), n * d);
  if (m.spec().embd_mult != 0.0f) scale(x, m.spec().embd_mult, n * d);
  if (!w.token_types.empty()) {  // bert: llama.cpp gives every token type 0 ("sentence A")
    get_row(w.token_types, 0, st.h.data());
    for (int64_t t = 0; t < n; ++t) add(x + t * d, st.h.data(), d);
  }
  if (!m.spec().rope && !w.position_embd.empty()) {  // learned absolute positions (optional for mpt)
    for (int64_t t = 0; t < n; ++t) {
      get_row(w.position_embd, batch[static_cast<size_t>(t)].pos, st.h.data());
      add(x + t * d, st.h.data(), d);
    }
  }
  if (m.spec().embd_norm) norm(m, st.ops, x, w.token_embd_norm, w.token_embd_norm_b, n, x);  // bloom
}

// x[i] = clamp(x[i], -c, c) (olmo, mpt: attention.clamp_kqv)
void clamp(float* x, float c, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] = std::min(std::max(x[i], -c), c);
}

// The q/k norms of QkNorms on n rows of n_heads heads: RMSNorm or LayerNorm over each head (one
// weight for all heads, or each head its own) or over the whole row (LayerNorm bias b, if any).
void qk_norms(const Model& m, const Tensor& w, const Tensor& b, float* x, int n_heads, int64_t n) {
  const HParams& hp = m.hparams();
  const QkNorms& qn = m.spec().qk_norms;
  const bool rms = qn.kind == NormKind::kRms;
  const float eps = rms ? hp.rms_eps : hp.norm_eps;
  auto apply = [&](float* row, const float* weight, int64_t width, int64_t rows) {
    rms ? rms_norm(row, weight, width, rows, eps, row) : layer_norm(row, weight, nullptr, width, rows, eps, row);
  };
  const int64_t hd = hp.head_dim_k;
  switch (qn.shape) {
    case QkNormShape::kShared: apply(x, f32(w), hd, n * n_heads); break;
    case QkNormShape::kRow:
      if (!rms && !b.empty()) {
        layer_norm(x, f32(w), f32(b), hd * n_heads, n, eps, x);
      } else {
        apply(x, f32(w), hd * n_heads, n);
      }
      break;
    case QkNormShape::kPerHead:
      for (int64_t t = 0; t < n; ++t) {
        for (int h = 0; h < n_heads; ++h) apply(x + (t * n_heads + h) * hd, f32(w) + h * hd, hd, 1);
      }
      break;
  }
}

// fn(run, b, e) for the tokens [b, e) of each run that lie inside [t0, t1): a thread's share of
// row-wise work, split where the positions restart.
template <typename Fn>
void for_run_pieces(std::span<const SeqRun> runs, int64_t t0, int64_t t1, Fn fn) {
  for (const SeqRun& r : runs) {
    const int64_t b = std::max(t0, r.t0), e = std::min(t1, r.t0 + r.n);
    if (b < e) fn(r, b, e);
  }
}

// Llama 4 / Mistral 3 attention temperature: each token's q times
// 1 + t * ln(floor(pos / n_ctx_orig) + 1) (1 inside the original context).
void scale_q_by_temperature(const Model& m, std::span<const SeqRun> runs, float* q) {
  const HParams& hp = m.hparams();
  const int64_t q_row = int64_t{hp.n_head} * hp.head_dim_k;
  for (const SeqRun& r : runs) {
    for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
      const float pos = static_cast<float>(r.pos0 + (t - r.t0));
      const double f = std::log(std::floor(pos / static_cast<float>(hp.n_ctx_orig_yarn)) + 1.0) * m.spec().attn_temp_scale + 1.0;
      scale(q + t * q_row, static_cast<float>(f), q_row);
    }
  }
}

// T5: layer l's bias of every key - query offset the runs need (its own attn_rel_b, else layer 0's,
// as llama.cpp), in st.rel_bias; returns offset 0's row (AttentionParams::rel_bias).
const float* relative_bias(const Model& m, ForwardState& st, int l, std::span<const SeqRun> runs) {
  const std::vector<LayerWeights>& layers = m.weights().layers;
  const Tensor& own = layers[static_cast<size_t>(l)].attn_rel_b;
  const float* rel_b = f32(own.empty() ? layers[0].attn_rel_b : own);
  int64_t n_kv = 1;
  for (const SeqRun& r : runs) n_kv = std::max(n_kv, r.pos0 + r.n);
  const int n_head = m.hparams().n_head;
  st.rel_bias.resize(static_cast<size_t>((2 * n_kv - 1) * n_head));
  // T5's encoder buckets keys before and after the query apart (bidirectional), whatever its mask.
  relative_bias_table(rel_b, n_head, m.spec().rel_buckets, /*bidirectional=*/true, n_kv, st.rel_bias.data());
  return st.rel_bias.data() + (n_kv - 1) * n_head;
}

// out = softmax(q K^T * scale + causal/window mask) V Wo for layer l; h is the normalised input of
// the batch's n tokens, which fall into `runs`.
void attention_block(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs,
                     int64_t n, float* out) {
  const HParams& hp = m.hparams();
  const ArchSpec& spec = m.spec();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const LayerAttention& la = m.layers()[static_cast<size_t>(l)];
  OpContext& ops = st.ops;
  float* q = st.q.data();  // [n, n_head * head_dim_k]
  float* k = st.k.data();  // [n, n_head_kv * head_dim_k]
  float* v = st.v.data();  // [n, n_head_kv * head_dim_v]
  const int64_t k_dim = st.kv.k_dim(), v_dim = st.kv.v_dim();

  linear3(ops, {&L.wq, &L.bq, q}, {&L.wk, &L.bk, k}, {&L.wv, &L.bv, v}, h, n);
  if (spec.clamp_kqv > 0) {
    clamp(q, spec.clamp_kqv, n * hp.n_head * hp.head_dim_k);
    clamp(k, spec.clamp_kqv, n * k_dim);
    clamp(v, spec.clamp_kqv, n * v_dim);
  }
  // qwen3 / gemma3: RMSNorm of every head of q and k before rotation.
  if (spec.qk_norm && !spec.qk_norm_after_rope) {
    rms_norm(q, f32(L.q_norm), hp.head_dim_k, n * hp.n_head, hp.rms_eps, q);
    rms_norm(k, f32(L.k_norm), hp.head_dim_k, n * hp.n_head_kv, hp.rms_eps, k);
  }
  // olmo2, stablelm, command-r: the other q/k norms, where the file has them (llama.cpp's test
  // for the optional ones).
  if (spec.qk_norms.has != Has::kNo) {
    if (!L.q_norm.empty()) qk_norms(m, L.q_norm, L.q_norm_b, q, hp.n_head, n);
    if (!L.k_norm.empty()) qk_norms(m, L.k_norm, L.k_norm_b, k, hp.n_head_kv, n);
  }
  const int64_t q_row = hp.n_head * hp.head_dim_k, k_row = hp.n_head_kv * hp.head_dim_k;
  if (spec.rope) {
    auto rotate = [&](int64_t t0, int64_t t1) {
      for_run_pieces(runs, t0, t1, [&](const SeqRun& r, int64_t b, int64_t e) {
        const int64_t pos = r.pos0 + (b - r.t0);
        rope(q + b * q_row, e - b, hp.n_head, hp.head_dim_k, pos, la.rope);
        rope(k + b * k_row, e - b, hp.n_head_kv, hp.head_dim_k, pos, la.rope);
      });
    };
    parallel_rows(ops, n, (q_row + k_row) * kRopeCost, rotate);
  }
  if (spec.qk_norm && spec.qk_norm_after_rope) {  // hunyuan-moe
    rms_norm(q, f32(L.q_norm), hp.head_dim_k, n * hp.n_head, hp.rms_eps, q);
    rms_norm(k, f32(L.k_norm), hp.head_dim_k, n * hp.n_head_kv, hp.rms_eps, k);
  }
  if (spec.qk_unit_norm && la.rope.n_rot > 0) {
    unit_rms_norm(q, hp.head_dim_k, n * hp.n_head, hp.rms_eps);
    unit_rms_norm(k, hp.head_dim_k, n * hp.n_head_kv, hp.rms_eps);
  }
  if (la.temp_tuning) {  // llama4: q * (log(floor((pos + 1) / 8192) + 1) * 0.1 + 1)
    for (const SeqRun& r : runs) {
      for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
        const float pos = static_cast<float>(r.pos0 + (t - r.t0));
        scale(q + t * q_row, std::log(std::floor((pos + 1.0f) / 8192.0f) + 1.0f) * 0.1f + 1.0f, q_row);
      }
    }
  }
  if (spec.attn_temp_scale != 0.0f) scale_q_by_temperature(m, runs, q);
  float q_scale = spec.attn_scale > 0 ? spec.attn_scale : 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
  if (spec.scale_q_first) {  // the same maths, but q is rounded (to the key type's format) after scaling
    scale(q, q_scale, n * hp.n_head * hp.head_dim_k);
    q_scale = 1.0f;
  }
  // Keys and values into the cache, in its element types.
  const FromFloatFn store_k = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_k())];
  const FromFloatFn store_v = ops.kernels->quantize_row[static_cast<uint32_t>(st.kv.type_v())];
  // Embedding passes pack each run (a whole sequence from position 0) into sequence 0 at its batch
  // offset: the cache needs max_batch positions, not one context per sequence.
  auto cache_seq = [&](const SeqRun& r) { return st.hidden_output ? 0 : r.seq; };
  auto cache_pos0 = [&](const SeqRun& r) { return st.hidden_output ? r.t0 : int64_t{0}; };
  for (const SeqRun& r : runs) {
    for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
      const int64_t row = cache_pos0(r) + r.pos0 + (t - r.t0);
      store_k(k + t * k_dim, st.kv.k(l, cache_seq(r), row), k_dim);
      store_v(v + t * v_dim, st.kv.v(l, cache_seq(r), row), v_dim);
    }
  }

  AttentionParams p;
  p.n_head = hp.n_head;
  p.n_head_kv = hp.n_head_kv;
  p.head_dim_k = hp.head_dim_k;
  p.head_dim_v = hp.head_dim_v;
  p.scale = q_scale;
  p.softcap = spec.attn_softcap;
  p.window = la.window;
  p.alibi_max_bias = spec.alibi_max_bias;
  p.chunked = la.chunked;
  p.symmetric = spec.swa_symmetric;
  p.sinks = f32(L.attn_sinks);
  // Embedding passes: llama.cpp's flash attention sums values in f32 over a decoder's cache, but in
  // f16 over an encoder's uncached keys and values (cast to f16), as measured against llama-embedding
  // (tests/embeddings: 1e-7..6e-6 apart that way, up to 8e-5 the other).
  // T5's score bias keeps llama.cpp off flash attention: its sums are f32 (and the keys too: the
  // embedder gives such a model an F32 cache).
  p.f16_accumulator = st.numerics == Numerics::kLlamaCpp && (!st.hidden_output || !spec.causal_attention) &&
                      spec.rel_buckets == 0;
  if (spec.rel_buckets > 0) p.rel_bias = relative_bias(m, st, l, runs);
  p.causal = spec.causal_attention;
  // Each run attends to its own sequence's rows, which by now hold every earlier position of it
  // (an earlier run of the same sequence in this batch was stored above).
  const int64_t att_row = hp.n_head * hp.head_dim_v;
  for (const SeqRun& r : runs) {
    KvLayerView view = st.kv.layer_view(l, cache_seq(r));
    if (st.hidden_output) {  // the run's position 0 is at its batch offset (no sliding rows here)
      view.k = st.kv.k(l, 0, cache_pos0(r));
      view.v = st.kv.v(l, 0, cache_pos0(r));
    }
    attention(ops, q + r.t0 * q_row, r.n, r.pos0, view, p, st.att.data() + r.t0 * att_row);
  }
  linear(ops, L.wo, L.bo, st.att.data(), n, out);
}

// Dense feed-forward on n rows of h: gated (SwiGLU / GeGLU) or ungated GELU, optional biases.
void dense_ffn(const Model& m, ForwardState& st, const Tensor& w_gate, const Tensor& w_up, const Tensor& w_down,
               const LayerWeights& L, const float* h, int64_t n, float* out) {
  const int64_t ff = m.hparams().n_ff;
  OpContext& ops = st.ops;
  float* gate = st.gate.data();  // [n, n_ff]
  float* up = st.up.data();      // [n, n_ff]
  const bool f16_gelu = st.numerics == Numerics::kLlamaCpp;
  switch (m.spec().ffn) {
    case FfnKind::kGelu:  // out = gelu(h Wup + b) Wdown + b
      linear(ops, w_up, L.ffn_up_b, h, n, gate);
      {
        auto act = [&](int64_t r0, int64_t r1) {
          f16_gelu ? gelu_f16(gate + r0 * ff, (r1 - r0) * ff) : gelu(*ops.kernels, gate + r0 * ff, (r1 - r0) * ff);
        };
        parallel_rows(ops, n, ff * kGluCost, act);
      }
      break;
    case FfnKind::kRelu:  // out = relu(h Wup) Wdown (the original T5)
      linear(ops, w_up, L.ffn_up_b, h, n, gate);
      for (int64_t i = 0; i < n * ff; ++i) gate[i] = std::max(gate[i], 0.0f);
      break;
    case FfnKind::kReluSqr:  // out = relu(h Wup)^2 Wdown (arcee)
      linear(ops, w_up, L.ffn_up_b, h, n, gate);
      relu_sqr(gate, n * ff);
      break;
    case FfnKind::kXielu:  // out = xielu(h Wup) Wdown (apertus; the layer's own parameters)
      linear(ops, w_up, L.ffn_up_b, h, n, gate);
      xielu(gate, n * ff, L.xielu);
      break;
    case FfnKind::kSwiGlu:  // out = (silu(h Wgate) * h Wup) Wdown
    case FfnKind::kGeGlu:   // out = (gelu(h Wgate) * h Wup) Wdown
      linear3(ops, {&w_gate, &L.ffn_gate_b, gate}, {&w_up, &L.ffn_up_b, up}, {}, h, n);
      {
        const bool swiglu = m.spec().ffn == FfnKind::kSwiGlu;
        auto glu = [&](int64_t r0, int64_t r1) {
          float* g = gate + r0 * ff;
          const float* u = up + r0 * ff;
          const int64_t count = (r1 - r0) * ff;
          if (swiglu) {
            silu_mul(*ops.kernels, g, u, count);
          } else if (f16_gelu) {
            gelu_mul_f16(g, u, count);
          } else {
            gelu_mul(g, u, count);
          }
        };
        parallel_rows(ops, n, ff * kGluCost, glu);
      }
      break;
  }
  linear(ops, w_down, L.ffn_down_b, gate, n, out);
}

void ffn_block(const Model& m, ForwardState& st, int l, const float* h, int64_t n, float* out) {
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  if (moe_layer(m.spec(), m.hparams(), l)) {
    moe_ffn(m, st, L, h, n, out);
  } else {
    dense_ffn(m, st, L.ffn_gate, L.ffn_up, L.ffn_down, L, h, n, out);
  }
}

}  // namespace

void forward_decoder(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ArchSpec& spec = m.spec();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();        // [n, d] residual stream
  float* h = st.h.data();        // [n, d] normalised input of a sub-block
  float* att = st.proj.data();   // [n, d] attention output
  float* ffn = st.ffn_out.data();  // [n, d] feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  embed(m, st, batch);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    if (spec.residual == Residual::kPostNorm) {  // bert: x = norm(x + attn(x)); x = norm(x + ffn(x))
      attention_block(m, st, l, x, runs, n, att);
      // jina-bert-v2's attn_norm_2 (where the file has it) re-adds the block's input: kept in h2.
      const bool norm_2 = spec.attn_norm_2 != Has::kNo && !L.attn_norm_2.empty();
      if (norm_2) std::memcpy(st.h2.data(), x, sizeof(float) * static_cast<size_t>(n * d));
      add(x, att, n * d);
      norm(m, st.ops, x, L.attn_out_norm, L.attn_out_norm_b, n, x);
      if (norm_2) {
        add(x, st.h2.data(), n * d);
        norm(m, st.ops, x, L.attn_norm_2, L.attn_norm_2_b, n, x);
      }
      ffn_block(m, st, l, x, n, ffn);
      add(x, ffn, n * d);
      norm(m, st.ops, x, L.layer_out_norm, L.layer_out_norm_b, n, x);
      continue;
    }
    // olmo2 has no pre-norms: its sub-blocks read the residual stream itself.
    const float* in = spec.pre_norms ? h : x;
    // modern-bert's layer 0 may have no attention norm (attn_norm_layer0): the identity there.
    const bool attn_norm = spec.pre_norms && (l > 0 || spec.attn_norm_layer0 == Has::kYes || !L.attn_norm.empty());
    if (attn_norm) norm(m, st.ops, x, L.attn_norm, L.attn_norm_b, n, h);
    attention_block(m, st, l, attn_norm ? in : x, runs, n, att);
    if (spec.post_norms) norm(m, st.ops, att, L.attn_post_norm, Tensor{}, n, att);
    if (spec.residual_mult != 0.0f) scale(att, spec.residual_mult, n * d);
    switch (spec.residual) {
      case Residual::kSequential:  // x += attn(norm1(x)); x += ffn(norm2(x))
        add(x, att, n * d);
        if (spec.pre_norms) norm(m, st.ops, x, L.ffn_norm, L.ffn_norm_b, n, h);
        ffn_block(m, st, l, in, n, ffn);
        break;
      case Residual::kParallel:  // x += attn(norm1(x)) + ffn(norm1(x))
        ffn_block(m, st, l, in, n, ffn);
        add(x, att, n * d);
        break;
      case Residual::kParallelTwoNorms:  // x += attn(norm1(x)) + ffn(norm2(x))
        norm(m, st.ops, x, L.ffn_norm, L.ffn_norm_b, n, st.h2.data());
        ffn_block(m, st, l, st.h2.data(), n, ffn);
        add(x, att, n * d);
        break;
      case Residual::kPostNorm:  // ran in full above (bert's blocks), which went on to the next layer
        break;
    }
    if (spec.post_norms) norm(m, st.ops, ffn, L.ffn_post_norm, Tensor{}, n, ffn);
    if (spec.residual_mult != 0.0f) scale(ffn, spec.residual_mult, n * d);
    add(x, ffn, n * d);
  }

  // logits = norm(x) Wout (+ b), soft-capped, for the tokens that ask: their rows of x moved to the
  // front first (x is not needed after this).
  int64_t rows = 0;
  for (int64_t t = 0; t < n; ++t) {
    if (!batch[static_cast<size_t>(t)].logits) continue;
    if (rows != t) std::memcpy(x + rows * d, x + t * d, sizeof(float) * static_cast<size_t>(d));
    ++rows;
  }
  if (rows == 0) return;
  if (st.hidden_output) {  // embeddings: the final hidden states, without the lm head
    if (w.output_norm.empty()) {
      std::memcpy(logits, x, sizeof(float) * static_cast<size_t>(rows * d));
    } else {
      norm(m, st.ops, x, w.output_norm, w.output_norm_b, rows, logits);
    }
    return;
  }
  norm(m, st.ops, x, w.output_norm, w.output_norm_b, rows, h);
  linear(st.ops, w.output, w.output_b, h, rows, logits);
  if (spec.logit_scale != 0) scale(logits, spec.logit_scale, rows * hp.n_vocab);
  if (spec.logit_mult != 0.0f) scale(logits, spec.logit_mult, rows * hp.n_vocab);  // granite
  if (spec.final_softcap > 0) {
    const float c = spec.final_softcap;
    for (int64_t i = 0; i < rows * hp.n_vocab; ++i) logits[i] = c * std::tanh(logits[i] / c);
  }
  if (spec.logit_div != 0.0f) scale(logits, 1.0f / spec.logit_div, rows * hp.n_vocab);
}

// The decoder's sub-blocks, for the forward functions of hybrids (decoder_load.h).
void decoder_attention(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs,
                       int64_t n, float* out) {
  attention_block(m, st, l, h, runs, n, out);
}

void decoder_ffn(const Model& m, ForwardState& st, int l, const float* h, int64_t n, float* out) {
  ffn_block(m, st, l, h, n, out);
}

}  // namespace ox
