// The forward pass of granitehybrid (llama.cpp's src/models/granite-hybrid.cpp): a hybrid whose
// layers mix by Mamba-2 or by the decoder's attention (per-layer head_count_kv, 0: Mamba-2), each
// followed by a SwiGLU feed-forward, with Granite's scales on the embeddings, on every sub-block's
// output and on the logits.
#include "core/model/decoder_load.h"
#include "core/model/recurrent.h"
#include "core/model/tensor_plan.h"

namespace ox {

void forward_granite_hybrid(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ArchSpec& spec = m.spec();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();          // [n, d] residual stream
  float* h = st.h.data();          // [n, d] normalised input of a sub-block
  float* out = st.proj.data();     // [n, d] a sub-block's output
  auto residual = [&](float* y) {  // x += y * residual_mult
    if (spec.residual_mult != 0.0f) scale(y, spec.residual_mult, n * d);
    add(x, y, n * d);
  };

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  if (spec.embd_mult != 0.0f) scale(x, spec.embd_mult, n * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, reinterpret_cast<const float*>(L.attn_norm.data), d, n, hp.rms_eps, h);
    if (is_recurrent_layer(spec, hp, l)) {
      mamba2_mixer(m, st, l, h, runs, n, out);
    } else {
      decoder_attention(m, st, l, h, runs, n, out);
    }
    residual(out);
    rms_norm(x, reinterpret_cast<const float*>(L.ffn_norm.data), d, n, hp.rms_eps, h);
    decoder_ffn(m, st, l, h, n, out);
    residual(out);
  }
  output_logits(m, st, batch, x, logits);
  if (spec.logit_div != 0.0f) {
    int64_t rows = 0;
    for (const BatchToken& b : batch) rows += b.logits ? 1 : 0;
    scale(logits, 1.0f / spec.logit_div, rows * hp.n_vocab);
  }
}

}  // namespace ox
