// Gemma 2: Gemma plus norms on each sub-block's output, logit soft-capping (attention and final)
// and a sliding window on every other layer (even layers local, odd global).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef gemma2{
    .name = "gemma2",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .output = Has::kNo,
             .post_norms = true,
             .embd_scale = true,
             .scale_q_first = true,
             .softcaps = true,
             .swa_pattern = 2},
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attn_logit_softcapping", SynthKey::kF32, 20},
                   {"final_logit_softcapping", SynthKey::kF32, 10}},
};

}  // namespace ox::archs
