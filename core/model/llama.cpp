// Llama (1/2/3, TinyLlama, Mistral, Mixtral): RMSNorm, rotary positions on adjacent pairs,
// grouped-query attention, SwiGLU feed-forward or a mixture of SwiGLU experts, tied or separate
// output. Llama 3 adds rope_freqs.weight (per-frequency divisors), which the loader picks up.
#include "core/model/archs.h"

namespace ox {

Status load_llama(ModelBuilder& b) {
  // ArchSpec defaults are llama's: RMSNorm, SwiGLU, sequential residual, 1/sqrt(head_dim) scale.
  // Mixtral is the same file with expert_count > 0 (ffn_gate_inp + ffn_*_exps instead of ffn_*).
  // llama.sliding_window (Mistral v0.1) is ignored, as llama.cpp does, so the window stays off.
  set_layer_attention(b, RopeStyle::kNorm, /*swa_pattern=*/0, 0.0f, 1.0f);
  return load_decoder(b);
}

}  // namespace ox
