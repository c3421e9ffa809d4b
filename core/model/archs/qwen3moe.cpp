// Qwen3-MoE (Qwen3-30B-A3B, 235B-A22B): Qwen3's attention (q/k head norms); softmax routing over
// experts expert_feed_forward_length wide (feed_forward_length / expert_used_count if absent),
// the chosen weights renormalised; no shared expert.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef qwen3moe{
    .name = "qwen3moe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .qk_norm = true,
             .moe = true,
             .experts = {.ff = ExpertFf::kNffOverUsed}},
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256}},
};

}  // namespace ox::archs
