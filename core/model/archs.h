// The architectures this engine runs. Each one is a loader that fills the model's ArchSpec from
// its hyperparameters and then loads tensors through the generic decoder loader; all of them run
// the one generic forward pass (decoder.cpp). model.cpp maps `general.architecture` to them.
#pragma once

#include "core/model/builder.h"

namespace ox {

Status load_llama(ModelBuilder& b);    // llama.cpp: llama 1/2/3, mistral (no SWA), mixtral MoE
Status load_qwen2(ModelBuilder& b);    // qwen.cpp
Status load_qwen3(ModelBuilder& b);
Status load_gemma(ModelBuilder& b);    // gemma.cpp
Status load_gemma2(ModelBuilder& b);
Status load_gemma3(ModelBuilder& b);
Status load_phi2(ModelBuilder& b);     // phi.cpp
Status load_phi3(ModelBuilder& b);
Status load_gpt2(ModelBuilder& b);     // gpt.cpp: GPT-2 and its LayerNorm descendants
Status load_falcon(ModelBuilder& b);
Status load_gptneox(ModelBuilder& b);

// Generic decoder (decoder_load.cpp, decoder.cpp), driven by b.spec():
// per-layer attention settings: sliding window on layers where (l % swa_pattern) < swa_pattern - 1
// (swa_pattern 0: no window), rope base rope_base_swa (0: the global base) on those layers.
void set_layer_attention(ModelBuilder& b, RopeStyle style, int swa_pattern, float rope_base_swa,
                         float rope_scale_swa);
// Loads every tensor the spec calls for (names and shapes checked) and sets the forward pass.
Status load_decoder(ModelBuilder& b);
// One forward pass over a batch (already checked: Model::forward_batch / Model::forward); logits
// gets a row for each token that asks for one, in batch order.
void forward_decoder(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);

}  // namespace ox
