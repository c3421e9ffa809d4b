// EXAONE 3.x: llama's layout with NEOX rotary positions (rope_freqs optional, as llama 3's).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef exaone{
    .name = "exaone",
    .spec = {.rope_style = RopeStyle::kNeox, .bias = {.qkv = Has::kOptional}, .rope_freqs = Has::kOptional},
};

}  // namespace ox::archs
