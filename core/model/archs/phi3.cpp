// Phi-3: llama-shaped with a fused qkv, NEOX rotary positions and the SwiGLU gate and up
// projections fused into ffn_up (rows [gate | up]). phi3.attention.sliding_window is not applied
// (as in llama.cpp).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef phi3{
    .name = "phi3",
    .spec = {.rope_style = RopeStyle::kNeox, .fused_qkv = true, .fused_gate_up = true, .scale_q_first = true},
};

}  // namespace ox::archs
