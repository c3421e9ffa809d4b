// StarCoder (1) / SantaCoder: GPT-2's layout (learned absolute positions, LayerNorm, fused qkv,
// GELU feed-forward, biases everywhere but the output projection) with multi-query attention.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef starcoder{
    .name = "starcoder",
    .spec = {.norm = NormKind::kLayer,
             .rope = false,
             .ffn = FfnKind::kGelu,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes},
             .fused_qkv = true,
             .qkv_either = false},
};

}  // namespace ox::archs
