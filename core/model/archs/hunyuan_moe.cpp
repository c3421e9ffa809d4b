// Hunyuan-A13B (hunyuan-moe): NEOX rotary, then every q and k head RMS-normalised (after
// rotation, unlike qwen3); experts feed_forward_length wide (llama.cpp ignores
// expert_feed_forward_length here), softmax routing, renormalised, plus a shared expert
// (expert_shared_feed_forward_length wide, n_ff if absent) on every token.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef hunyuan_moe{
    .name = "hunyuan-moe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .qk_norm = true,
             .qk_norm_after_rope = true,
             .moe = true,
             .experts = {.ff = ExpertFf::kNffAlways, .shared = SharedFf::kShexpOrNff}},
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},  // ignored: experts are n_ff wide
                   {"expert_shared_feed_forward_length", SynthKey::kU32, 256}},
};

}  // namespace ox::archs
