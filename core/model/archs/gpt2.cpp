// GPT-2: learned absolute position embeddings (no rotary), LayerNorm, fused qkv, GELU
// feed-forward, biases everywhere but the output projection.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef gpt2{
    .name = "gpt2",
    .spec = {.norm = NormKind::kLayer,
             .rope = false,
             .ffn = FfnKind::kGelu,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes},
             .fused_qkv = true,
             .qkv_either = false},
};

}  // namespace ox::archs
