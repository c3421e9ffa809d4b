// SmolLM3: llama's layout with NoPE layers: every fourth layer (l + 1 divisible by 4) attends
// without rotary positions (llama.cpp's n_no_rope_layer_step, fixed at 4 for this architecture).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef smollm3{
    .name = "smollm3",
    .spec = {.bias = {.qkv = Has::kOptional}, .no_rope_layer_step = 4},
    // Four layers, so that the parity model has a NoPE layer.
    .synth_keys = {{"block_count", SynthKey::kU32, 4}},
};

}  // namespace ox::archs
