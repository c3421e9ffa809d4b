// Orion: llama's attention and SwiGLU feed-forward with LayerNorms (weight and bias) and NEOX
// rotary positions; the output projection is required.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef orion{
    .name = "orion",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional, .norm = Has::kYes},
             .output = Has::kYes},
};

}  // namespace ox::archs
