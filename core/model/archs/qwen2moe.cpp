// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention; softmax routing without
// renormalising the chosen weights, plus a shared expert on every token gated by
// sigmoid(h . ffn_gate_inp_shexp). Experts are feed_forward_length / expert_used_count wide unless
// expert_feed_forward_length says; the shared expert expert_shared_feed_forward_length (n_ff if absent).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef qwen2moe{
    .name = "qwen2moe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kYes,
             .moe = true,
             .experts = {.norm_w = false,
                         .ff = ExpertFf::kNffOverUsed,
                         .shared = SharedFf::kShexpOrNff,
                         .shared_gate = true}},
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_shared_feed_forward_length", SynthKey::kU32, 256}},
};

}  // namespace ox::archs
