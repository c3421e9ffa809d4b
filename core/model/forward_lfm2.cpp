// The forward pass of lfm2 (llama.cpp's src/models/lfm2.cpp): a hybrid whose layers mix either by
// the decoder's attention (q/k norms, NEOX rope) or by a short convolution, then all go through a
// SwiGLU feed-forward; RMSNorm before each sub-block, the final norm is token_embd_norm.
#include "core/model/decoder_load.h"
#include "core/model/recurrent.h"
#include "core/model/tensor_plan.h"

namespace ox {

void forward_lfm2(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t n = static_cast<int64_t>(batch.size());
  const int64_t d = hp.n_embd;
  float* x = st.x.data();        // [n, d] residual stream
  float* h = st.h.data();        // [n, d] normalised input of a sub-block
  float* mix = st.proj.data();   // [n, d] attention or convolution output
  float* ffn = st.ffn_out.data();  // [n, d] feed-forward output

  const std::span<const SeqRun> runs(st.runs.data(), split_runs(batch, st.runs));
  reset_started_sequences(st, runs);
  for (int64_t t = 0; t < n; ++t) get_row(w.token_embd, batch[static_cast<size_t>(t)].token, x + t * d);
  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    rms_norm(x, reinterpret_cast<const float*>(L.attn_norm.data), d, n, hp.rms_eps, h);
    if (is_recurrent_layer(m.spec(), hp, l)) {
      shortconv_mixer(m, st, l, h, runs, n, mix);
    } else {
      decoder_attention(m, st, l, h, runs, n, mix);
    }
    add(x, mix, n * d);
    rms_norm(x, reinterpret_cast<const float*>(L.ffn_norm.data), d, n, hp.rms_eps, h);
    decoder_ffn(m, st, l, h, n, ffn);
    add(x, ffn, n * d);
  }
  output_logits(m, st, batch, x, logits);
}

}  // namespace ox
