// Qwen3: Qwen2 without the biases, with every q and k head RMS-normalised before rotation and a
// head size (attention.key_length) that need not be n_embd / n_head.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef qwen3{
    .name = "qwen3",
    .spec = {.rope_style = RopeStyle::kNeox, .qk_norm = true},
};

}  // namespace ox::archs
