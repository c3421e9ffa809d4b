// The forward pass of falcon-h1 (llama.cpp's src/models/falcon-h1.cpp): every layer runs the
// decoder's attention and a Mamba-2 mixer side by side on the same RMSNorm of x and adds both to x,
// then a SwiGLU feed-forward. The attention keeps K/V rows, the mixer its state, in one cache.
#include "core/model/decoder_load.h"
#include "core/model/recurrent.h"

namespace ox {

void forward_falcon_h1(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();          // [n, d] residual stream
  float* h = st.h.data();          // [n, d] normalised input of a sub-block
  float* att = st.proj.data();     // [n, d] attention output
  float* ffn = st.ffn_out.data();  // [n, d] mixer, then feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, reinterpret_cast<const float*>(L.attn_norm.data), d, n, hp.rms_eps, h);
    decoder_attention(m, st, l, h, runs, n, att);
    mamba2_mixer(m, st, l, h, runs, n, ffn);
    add(att, ffn, n * d);
    add(x, att, n * d);
    rms_norm(x, reinterpret_cast<const float*>(L.ffn_norm.data), d, n, hp.rms_eps, h);
    decoder_ffn(m, st, l, h, n, ffn);
    add(x, ffn, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
