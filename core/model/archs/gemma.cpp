// Gemma: embeddings scaled by sqrt(n_embd), GELU-gated feed-forward, NEOX rotary positions, tied
// output (llama.cpp never reads an output.weight); q is scaled by 1/sqrt(head_dim) before attention. Norm weights are stored with Gemma's
// "1 +" already folded in, so they multiply like any other norm weight.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef gemma{
    .name = "gemma",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .output = Has::kNo, .embd_scale = true, .scale_q_first = true},
};

}  // namespace ox::archs
