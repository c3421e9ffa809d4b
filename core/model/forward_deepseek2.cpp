// The forward pass of deepseek2 (llama.cpp's src/models/deepseek2.cpp): multi-head latent attention,
// then the generic decoder's feed-forward (the leading dense layers, then routed and shared experts).
// Each layer: x += attention(rmsnorm(x)); x += ffn(rmsnorm(x)).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/model/decoder_load.h"
#include "core/model/mla.h"
#include "core/model/recurrent.h"
#include "core/ops/attention.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }

// The shapes of one layer's latent attention.
struct MlaDims {
  int64_t n_head, n_rot, kv_lora, q_lora;
  int64_t head_k, head_v, nope;  // a head's real key (nope + n_rot) and value sizes
  int64_t kv_row;                // the compressed row [c (kv_lora) | k_rot (n_rot)]
};

MlaDims dims_of(const HParams& hp) {
  MlaDims d;
  d.n_head = hp.n_head;
  d.n_rot = hp.n_rot;
  d.kv_lora = hp.n_lora_kv;
  d.q_lora = hp.n_lora_q;
  d.head_k = hp.mla_head_dim_k();
  d.head_v = hp.mla_head_dim_v();
  d.nope = d.head_k - d.n_rot;
  d.kv_row = d.kv_lora + d.n_rot;
  return d;
}

// dst[t, 0..width) = src[t * src_stride + 0..width) for n rows: one head's slice of every token,
// contiguous, as matmul reads its input.
void gather(const float* src, int64_t src_stride, int64_t width, int64_t n, float* dst) {
  for (int64_t t = 0; t < n; ++t) {
    std::memcpy(dst + t * width, src + t * src_stride, sizeof(float) * static_cast<size_t>(width));
  }
}

// Mistral Large 3's attention temperature: the queries of position p times
// 1 + t ln(floor(p / length) + 1), computed as llama.cpp's llm_graph_input_attn_temp.
void scale_by_temperature(const ArchSpec& s, std::span<const SeqRun> runs, float* q, int64_t q_row) {
  if (s.attn_temp_scale == 0.0f) return;
  for (const SeqRun& r : runs) {
    for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
      const float pos = static_cast<float>(r.pos0 + (t - r.t0));
      const double f = std::log(std::floor(pos / static_cast<float>(s.attn_temp_length)) + 1.0) * s.attn_temp_scale + 1.0;
      scale(q + t * q_row, static_cast<float>(f), q_row);
    }
  }
}

// The working memory of one call, carved from st.mixer (mla_scratch_floats per token).
struct MlaBuffers {
  float* q_a;     // [n, q_lora]              q's low-rank projection
  float* q;       // [n, n_head * head_k]     per head [q_nope | q_rot]
  float* kv_pe;   // [n, kv_row]              per token [c | k_rot]
  float* kv;      // [n, n_head * (nope + head_v)]: attn_kv_b's per head [k_nope | v]; or the heads' values
  float* head;    // [n, max(nope, kv_lora)]  one head's slice, gathered
};

MlaBuffers carve(ForwardState& st, const MlaDims& d, int64_t n) {
  MlaBuffers b;
  b.q_a = st.mixer.data();
  b.q = b.q_a + n * d.q_lora;
  b.kv_pe = b.q + n * d.n_head * d.head_k;
  b.kv = b.kv_pe + n * d.kv_row;
  b.head = b.kv + n * d.n_head * (d.nope + d.head_v);
  return b;
}

// Attention over the cache for every run of the batch: q [n, n_head * p.head_dim_k] -> st.att
// [n, n_head * p.head_dim_v]. latent: the cache holds the compressed rows, whose first kv_lora values
// are also the values (llama.cpp's K-only cache of files with attn_k_b / attn_v_b).
void attend(const Model& m, ForwardState& st, int l, std::span<const SeqRun> runs, const float* q, AttentionParams p,
            bool latent) {
  const int64_t q_row = int64_t{p.n_head} * p.head_dim_k, att_row = int64_t{p.n_head} * p.head_dim_v;
  p.scale = m.spec().attn_scale;
  p.f16_accumulator = st.numerics == Numerics::kLlamaCpp;
  for (const SeqRun& r : runs) {
    KvLayerView view = st.kv.layer_view(l, r.seq);
    if (latent) {  // the values are the keys' first head_dim_v elements
      view.v = view.k;
      view.v_row_bytes = view.k_row_bytes;
      view.type_v = view.type_k;
    }
    attention(st.ops, q + r.t0 * q_row, r.n, r.pos0, view, p, st.att.data() + r.t0 * att_row);
  }
}

// rows[t] of `width` floats into the cache's rows of layer l (K or V) at each token's position.
void store(ForwardState& st, int l, std::span<const SeqRun> runs, const float* rows, int64_t width, bool values) {
  const DType type = values ? st.kv.type_v() : st.kv.type_k();
  const FromFloatFn quantize = st.ops.kernels->quantize_row[static_cast<uint32_t>(type)];
  for (const SeqRun& r : runs) {
    for (int64_t t = r.t0; t < r.t0 + r.n; ++t) {
      const int64_t pos = r.pos0 + (t - r.t0);
      quantize(rows + t * width, values ? st.kv.v(l, r.seq, pos) : st.kv.k(l, r.seq, pos), width);
    }
  }
}

// Files with attn_k_b / attn_v_b (llama.cpp's "absorption"): each head's q_nope is taken into the
// latent space (k_b^T q_nope), so that every head attends to the one cached row [c | k_rot] per
// position (queries [k_b^T q_nope | q_rot]) and sums the c's; v_b then expands each head's sum.
void latent_attention(const Model& m, ForwardState& st, const LayerWeights& L, int l, std::span<const SeqRun> runs,
                      const MlaDims& d, const MlaBuffers& b, int64_t n) {
  OpContext& ops = st.ops;
  float* q_lat = st.q.data();  // [n, n_head * kv_row]: per head [k_b^T q_nope | q_rot]
  const int64_t q_row = d.n_head * d.head_k, q_lat_row = d.n_head * d.kv_row;
  for (int64_t h = 0; h < d.n_head; ++h) {
    gather(b.q + h * d.head_k, q_row, d.nope, n, b.head);
    matmul(ops, L.wk_b.matrix(h), b.head, n, q_lat + h * d.kv_row, q_lat_row);
    for (int64_t t = 0; t < n; ++t) {
      std::memcpy(q_lat + t * q_lat_row + h * d.kv_row + d.kv_lora, b.q + t * q_row + h * d.head_k + d.nope,
                  sizeof(float) * static_cast<size_t>(d.n_rot));
    }
  }
  scale_by_temperature(m.spec(), runs, q_lat, q_lat_row);
  store(st, l, runs, b.kv_pe, d.kv_row, false);
  AttentionParams p;
  p.n_head = static_cast<int>(d.n_head);
  p.n_head_kv = 1;
  p.head_dim_k = static_cast<int>(d.kv_row);
  p.head_dim_v = static_cast<int>(d.kv_lora);
  attend(m, st, l, runs, q_lat, p, true);
  // [n, n_head * kv_lora] latent sums -> [n, n_head * head_v] values
  const float* att = st.att.data();
  for (int64_t h = 0; h < d.n_head; ++h) {
    gather(att + h * d.kv_lora, d.n_head * d.kv_lora, d.kv_lora, n, b.head);
    matmul(ops, L.wv_b.matrix(h), b.head, n, b.kv + h * d.head_v, d.n_head * d.head_v);
  }
}

// Files with attn_kv_b: every head's k_nope and v expanded from c, the shared k_rot appended to
// each head's k_nope; attention with n_head key/value heads over the cache of those.
void expanded_attention(const Model& m, ForwardState& st, const LayerWeights& L, int l, std::span<const SeqRun> runs,
                        const MlaDims& d, const MlaBuffers& b, int64_t n) {
  float* k = st.k.data();  // [n, n_head * head_k]: per head [k_nope | k_rot]
  float* v = st.v.data();  // [n, n_head * head_v]
  const int64_t kv_b_row = d.n_head * (d.nope + d.head_v);
  gather(b.kv_pe, d.kv_row, d.kv_lora, n, b.head);
  matmul(st.ops, L.wkv_b, b.head, n, b.kv);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < d.n_head; ++h) {
      const float* kv_h = b.kv + t * kv_b_row + h * (d.nope + d.head_v);
      float* k_h = k + (t * d.n_head + h) * d.head_k;
      std::memcpy(k_h, kv_h, sizeof(float) * static_cast<size_t>(d.nope));
      std::memcpy(k_h + d.nope, b.kv_pe + t * d.kv_row + d.kv_lora, sizeof(float) * static_cast<size_t>(d.n_rot));
      std::memcpy(v + (t * d.n_head + h) * d.head_v, kv_h + d.nope, sizeof(float) * static_cast<size_t>(d.head_v));
    }
  }
  scale_by_temperature(m.spec(), runs, b.q, d.n_head * d.head_k);
  store(st, l, runs, k, d.n_head * d.head_k, false);
  store(st, l, runs, v, d.n_head * d.head_v, true);
  AttentionParams p;
  p.n_head = p.n_head_kv = static_cast<int>(d.n_head);
  p.head_dim_k = static_cast<int>(d.head_k);
  p.head_dim_v = static_cast<int>(d.head_v);
  attend(m, st, l, runs, b.q, p, false);
  std::memcpy(b.kv, st.att.data(), sizeof(float) * static_cast<size_t>(n * d.n_head * d.head_v));
}

// out = attention(h) W_o for layer l: q from h through q_a / q_a_norm / q_b (or wq); one compressed
// row [c | k_rot] per token through kv_a_mqa, c RMS-normalised; rotary positions on the last n_rot
// values of q's heads and of k_rot only.
void mla_block(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
               float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const RopeParams& rope_params = m.layers()[static_cast<size_t>(l)].rope;
  OpContext& ops = st.ops;
  const MlaDims d = dims_of(hp);
  const MlaBuffers b = carve(st, d, n);
  if (L.wq_a.empty()) {
    matmul(ops, L.wq, h, n, b.q);
  } else {
    matmul(ops, L.wq_a, h, n, b.q_a);
    rms_norm(b.q_a, f32(L.q_a_norm), d.q_lora, n, hp.rms_eps, b.q_a);
    matmul(ops, L.wq_b, b.q_a, n, b.q);
  }
  matmul(ops, L.wkv_a_mqa, h, n, b.kv_pe);
  for (int64_t t = 0; t < n; ++t) {
    rms_norm(b.kv_pe + t * d.kv_row, f32(L.kv_a_norm), d.kv_lora, 1, hp.rms_eps, b.kv_pe + t * d.kv_row);
  }
  for (const SeqRun& r : runs) {  // the rotated parts sit after nope (q's heads) and kv_lora (the row)
    rope(b.q + r.t0 * d.n_head * d.head_k + d.nope, r.n, static_cast<int>(d.n_head), static_cast<int>(d.head_k), r.pos0,
         rope_params);
    rope(b.kv_pe + r.t0 * d.kv_row + d.kv_lora, r.n, 1, static_cast<int>(d.kv_row), r.pos0, rope_params);
  }
  if (hp.mla_absorbed()) {
    latent_attention(m, st, L, l, runs, d, b, n);
  } else {
    expanded_attention(m, st, L, l, runs, d, b, n);
  }
  matmul(ops, L.wo, b.kv, n, out);  // b.kv: [n, n_head * head_v], the heads' values
}

}  // namespace

int64_t mla_scratch_floats(const ArchSpec& s, const HParams& hp) {
  if (!s.mla) return 0;
  const MlaDims d = dims_of(hp);
  return d.q_lora + d.n_head * d.head_k + d.kv_row + d.n_head * (d.nope + d.head_v) + std::max(d.nope, d.kv_lora);
}

void forward_deepseek2(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();          // [n, d] residual stream
  float* h = st.h.data();          // [n, d] normalised input of a sub-block
  float* att = st.proj.data();     // [n, d] attention output
  float* ffn = st.ffn_out.data();  // [n, d] feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, f32(L.attn_norm), d, n, hp.rms_eps, h);
    mla_block(m, st, l, h, runs, n, att);
    add(x, att, n * d);
    rms_norm(x, f32(L.ffn_norm), d, n, hp.rms_eps, h);
    decoder_ffn(m, st, l, h, n, ffn);
    add(x, ffn, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
