// Qwen2 / Qwen2.5: llama with NEOX rotary positions and q/k/v biases; embeddings usually tied.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef qwen2{
    .name = "qwen2",
    .spec = {.rope_style = RopeStyle::kNeox, .bias = {.qkv = Has::kYes}},
};

}  // namespace ox::archs
