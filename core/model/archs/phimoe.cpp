// PhiMoE (Phi-3.5-MoE): Phi-3's attention (q scaled before attention, NEOX rotary) with separate
// q/k/v, RMSNorms that carry a bias, output bias; mixtral-style experts (softmax, renormalised).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef phimoe{
    .name = "phimoe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kYes, .norm = Has::kYes, .output = Has::kYes},
             .output = Has::kYes,
             .moe = true,
             .scale_q_first = true},
    .synth_keys = {{"expert_count", SynthKey::kU32, 4}, {"expert_used_count", SynthKey::kU32, 2}},
};

}  // namespace ox::archs
