// eurobert (EuroBERT): llama's pre-norm blocks (RMSNorm, SwiGLU, no biases) with neox rotary
// positions, as an encoder: every token attends to its whole input, and there is no lm head.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef eurobert{
    .name = "eurobert",
    .spec = {.rope_style = RopeStyle::kNeox, .output = Has::kNo, .causal_attention = false},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1}},  // mean
};

}  // namespace ox::archs
