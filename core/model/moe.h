// The mixture-of-experts feed-forward (llama.cpp's build_moe_ffn): a router scores the experts,
// each token runs through its n_expert_used best, weighted; shared experts run on every token.
// What varies between architectures is the spec's MoeSpec (arch_spec.h).
#pragma once

#include <cstdint>

#include "core/model/model.h"

namespace ox {

// The width of one routed expert's feed-forward (0: the file must say and does not).
int expert_ff(const ArchSpec& s, const HParams& hp);
// The width of the shared expert(s), 0 if the layer has none.
int shared_ff(const ArchSpec& s, const HParams& hp);
// Whether layer l has experts (a spec with leading_dense keeps the first layers dense).
bool moe_layer(const ArchSpec& s, const HParams& hp, int l);

// The expert keys only some architectures read (llama.cpp's expert_weights_scale,
// expert_weights_norm, expert_gating_func), into the spec: an absent key keeps the spec's value,
// except that an absent gating function is an error where `gating` is kRequired.
struct MoeKeys {
  bool scale = false;
  bool norm = false;
  enum { kIgnored, kOptional, kRequired } gating = kIgnored;
};
Status read_moe_keys(const gguf::GgufFile& f, const HParams& hp, MoeKeys keys, MoeSpec& ms);

// out = the experts' weighted outputs (+ the shared expert's) for n rows of h. The router scores
// router_in's rows where given (gemma4 routes on its own normalisation of the residual), else h's;
// each expert's output is scaled by ffn_down_exps.scale[e] where the file has it.
void moe_ffn(const Model& m, ForwardState& st, const LayerWeights& L, const float* h, int64_t n, float* out,
             const float* router_in = nullptr);

// The weight bytes one decoded token reads: every tensor but the expert matrices, plus
// n_expert_used experts' share of each expert tensor (the embedding table counts as one row unless
// it doubles as the output projection).
uint64_t decode_weight_bytes(const Model& m);

}  // namespace ox
