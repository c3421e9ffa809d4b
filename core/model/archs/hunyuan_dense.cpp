// Hunyuan dense (Hunyuan-1.8B/4B/7B): llama's layout with NEOX rotary positions, q/k head norms
// applied after the rotation, and an NTK-aware base from rope.scaling.alpha (base *
// alpha^(d / (d - 2)), d the head size). Its rope.dimension_sections (multimodal positions) rotate
// text as plain NEOX, all sections sharing the token's position.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef hunyuan_dense{
    .name = "hunyuan-dense",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .qk_norm = true,
             .qk_norm_after_rope = true,
             .rope_alpha_base = true},
    .synth_keys = {{"rope.scaling.alpha", SynthKey::kF32, 1000}},
};

}  // namespace ox::archs
