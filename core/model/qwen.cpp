// Qwen2 / Qwen2.5 and Qwen3: llama-shaped decoders with rotary positions on split halves (NEOX).
// Qwen2 adds biases to q/k/v; Qwen3 drops them and RMS-normalises each q and k head instead,
// with a head size (attention.key_length) that need not be n_embd / n_head.
#include "core/model/archs.h"

namespace ox {

Status load_qwen2(ModelBuilder& b) {
  // attn_{q,k,v}.bias are picked up by the loader; embeddings are usually tied (no output.weight).
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

Status load_qwen3(ModelBuilder& b) {
  b.spec().qk_norm = true;
  set_layer_attention(b, RopeStyle::kNeox, 0, 0.0f, 1.0f);
  return load_decoder(b);
}

}  // namespace ox
