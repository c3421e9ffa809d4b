// The generic decoder's loader and forward pass, which every architecture without a forward of
// its own runs (decoder_load.cpp, decoder.cpp).
#pragma once

#include <span>
#include <vector>

#include "core/model/builder.h"

namespace ox {

// How many layers (the first ones) store keys and values: the others reuse theirs
// (ArchSpec::shared_kv, shared_kv_from).
int n_layer_kv_own(const ArchSpec& s, const HParams& hp);
// Per-layer attention settings: the sliding window on the spec's (or the file's) pattern of
// layers, rope style, base and scaling; rope_freqs (llama3) or nullptr.
std::vector<LayerAttention> layer_attention(const ArchSpec& s, const HParams& hp, const float* rope_freqs);
// Loads every tensor of the plan (names and shapes checked) and the per-layer settings.
Status load_decoder(ModelBuilder& b);
// One forward pass over a batch (already checked: Model::forward_batch / Model::forward); logits
// gets a row for each token that asks for one, in batch order.
void forward_decoder(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// Its sub-blocks, for the forward functions of hybrids: out = attention(h) of layer l (K/V into the
// cache, the spec's q/k norms, rope and window) and out = feed-forward(h) (dense or experts).
void decoder_attention(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs,
                       int64_t n, float* out);
void decoder_ffn(const Model& m, ForwardState& st, int l, const float* h, int64_t n, float* out);

}  // namespace ox
