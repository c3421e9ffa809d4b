// GPT-2 and two LayerNorm descendants with fused qkv projections and GELU feed-forward:
//   GPT-2: learned absolute position embeddings (no rotary), sequential blocks, biases everywhere.
//   Falcon: multi-query attention, NEOX rotary positions, no biases; attention and feed-forward
//   run in parallel from one LayerNorm (7B), or from two (40B: attn_norm_2 feeds the FFN).
//   GPT-NeoX (Pythia): partial NEOX rotary, biases, and attention and feed-forward in parallel from
//   their own LayerNorms when use_parallel_residual is set (sequential otherwise).
#include "core/model/archs.h"

namespace ox {
namespace {

void gpt_common(ArchSpec& s) {
  s.norm = NormKind::kLayer;
  s.ffn = FfnKind::kGelu;
  s.fused_qkv = true;
}

}  // namespace

Status load_gpt2(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  gpt_common(s);
  s.rope = false;
  set_layer_attention(b, RopeStyle::kNorm, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_falcon(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  gpt_common(s);
  if (b.has("blk.0.attn_norm_2.weight")) {
    s.residual = Residual::kParallelTwoNorms;
    s.ffn_norm_name = "attn_norm_2";
  } else {
    s.residual = Residual::kParallel;
  }
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_gptneox(ModelBuilder& b) {
  ArchSpec& s = b.spec();
  gpt_common(s);
  OX_ASSIGN_OR_RETURN(const bool parallel, b.file().get_bool_or("gptneox.use_parallel_residual", true));
  s.residual = parallel ? Residual::kParallelTwoNorms : Residual::kSequential;
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

}  // namespace ox
