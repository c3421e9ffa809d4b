// Microsoft Phi-2 and Phi-3.
//   Phi-2: one LayerNorm feeds attention and feed-forward in parallel; fused qkv with bias;
//   rotary positions on the first rope.dimension_count dims of each head (NEOX halves); GELU
//   feed-forward with biases; output projection with a bias.
//   Phi-3: llama-like (RMSNorm, sequential) with a fused qkv (no bias), NEOX rotary positions and
//   the SwiGLU gate and up projections fused into ffn_up (rows [gate | up]).
#include "core/model/archs.h"

namespace ox {

Status load_phi2(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  s.norm = NormKind::kLayer;
  s.residual = Residual::kParallel;
  s.ffn = FfnKind::kGelu;
  s.fused_qkv = true;
  s.scale_q_first = true;
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_phi3(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  s.fused_qkv = true;
  s.fused_gate_up = true;
  s.scale_q_first = true;
  // phi3.attention.sliding_window is not applied (as in llama.cpp).
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

}  // namespace ox
