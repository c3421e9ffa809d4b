// ERNIE 4.5 MoE: llama-shaped attention (optional q/k/v biases), the first leading_dense_block_count
// layers dense and then every interleave_moe_layer_step-th layer with experts (softmax routing,
// renormalised, optional choice bias exp_probs_b) plus a shared expert where
// expert_shared_feed_forward_length > 0.
#include "core/model/arch_registry.h"
#include "core/model/moe.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec&) {
  if (hp.n_moe_layer_step <= 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key '%s.interleave_moe_layer_step'", f.name().c_str(), hp.arch.c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef ernie4_5_moe{
    .name = "ernie4_5-moe",
    // attn_output.bias: llama.cpp loads it when present but its graph never adds it.
    .spec = {.bias = {.qkv = Has::kOptional},
             .moe = true,
             .experts = {.ff = ExpertFf::kRequired,
                         .shared = SharedFf::kIfShexpKey,
                         .probs_bias = Has::kOptional,
                         .leading_dense = true}},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"expert_shared_feed_forward_length", SynthKey::kU32, 256},
                   {"interleave_moe_layer_step", SynthKey::kU32, 1},
                   {"leading_dense_block_count", SynthKey::kU32, 1}},
};

}  // namespace ox::archs
