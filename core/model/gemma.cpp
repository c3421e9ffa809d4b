// Gemma 1/2/3: RMSNorm decoders with embeddings scaled by sqrt(n_embd), GELU-gated feed-forward,
// NEOX rotary positions and tied output. Norm weights are stored with Gemma's "1 +" already
// folded in, so they multiply like any other norm weight.
//   Gemma 2 adds norms on each sub-block's output, logit soft-capping (attention and final) and a
//   sliding window on every other layer. Gemma 3 replaces soft-capping by q/k head norms, and its
//   sliding-window layers use their own rope base (10000 unless rope.freq_base_swa says otherwise)
//   without the global layers' rope scaling.
#include <cmath>

#include "core/model/archs.h"

namespace ox {
namespace {

void gemma_common(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  s.ffn = FfnKind::kGeGlu;
  s.embd_scale = true;
  // Queries are scaled by 1/sqrt(head_dim) (query_pre_attn_scalar = head_dim for these models).
  s.attn_scale = 1.0f / std::sqrt(static_cast<float>(b.hp().head_dim_k));
  s.scale_q_first = true;
}

}  // namespace

Status load_gemma(ModelBuilder& b) {
  gemma_common(b);
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_gemma2(ModelBuilder& b) {
  const HParams& hp = b.hp();
  gemma_common(b);
  ArchSpec& s = b.spec();
  s.post_norms = true;
  s.attn_softcap = hp.attn_softcap;
  s.final_softcap = hp.final_softcap;
  // Even layers are local (sliding window), odd layers global.
  set_layer_attention(b, RopeStyle::kNeox, hp.swa_pattern > 0 ? hp.swa_pattern : 2, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_gemma3(ModelBuilder& b) {
  const HParams& hp = b.hp();
  gemma_common(b);
  ArchSpec& s = b.spec();
  s.post_norms = true;
  s.qk_norm = true;
  // Five local layers per global one unless the file says otherwise.
  const int pattern = hp.swa_pattern > 0 ? hp.swa_pattern : 6;
  const float base_swa = hp.rope_freq_base_swa > 0 ? hp.rope_freq_base_swa : 10000.0f;
  set_layer_attention(b, RopeStyle::kNeox, pattern, base_swa, 1.0f);
  return load_decoder(b);
}

}  // namespace ox
