// The forward pass of pure state-space models (mamba, mamba2; llama.cpp's src/models/mamba.cpp):
// x += mixer(rmsnorm(x)) per layer, no attention and no feed-forward, then the output norm.
#include "core/model/recurrent.h"

namespace ox {

void forward_mamba(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();       // [n, d] residual stream
  float* h = st.h.data();       // [n, d] normalised input of the mixer
  float* mix = st.proj.data();  // [n, d] mixer output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, reinterpret_cast<const float*>(L.attn_norm.data), d, n, hp.rms_eps, h);
    if (m.spec().recurrent == Recurrent::kMamba2) {
      mamba2_mixer(m, st, l, h, runs, n, mix);
    } else {
      mamba_mixer(m, st, l, h, runs, n, mix);
    }
    add(x, mix, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
