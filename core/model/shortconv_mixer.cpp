// lfm2's short-convolution mixer (llama.cpp's build_shortconv_block): in_proj splits into gates b, c
// and input x; the causal depthwise convolution runs over b * x with the sequence's last l_cache - 1
// inputs as state; c gates its output before out_proj.
#include "core/model/recurrent.h"
#include "core/ops/ssm.h"

namespace ox {

void shortconv_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                     float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t d = hp.n_embd;
  float* bcx = st.mixer.data();  // [n, 3d]: b | c | x
  float* bx = bcx + n * 3 * d;   // [n, d]
  float* conv = bx + n * d;      // [n, d]
  matmul(st.ops, L.ssm_in, h, n, bcx);
  for (int64_t t = 0; t < n; ++t) {
    const float* r = bcx + t * 3 * d;
    for (int64_t i = 0; i < d; ++i) bx[t * d + i] = r[i] * r[2 * d + i];
  }
  const float* w = reinterpret_cast<const float*>(L.ssm_conv1d.data);
  for (const SeqRun& r : runs) {
    ssm_conv(st.kv.rs().conv(l, r.seq), bx + r.t0 * d, d, w, d, hp.shortconv_l_cache, r.n, conv + r.t0 * d, d);
  }
  for (int64_t t = 0; t < n; ++t) {
    const float* c = bcx + t * 3 * d + d;
    for (int64_t i = 0; i < d; ++i) conv[t * d + i] *= c[i];
  }
  matmul(st.ops, L.ssm_out, conv, n, out);
}

}  // namespace ox
