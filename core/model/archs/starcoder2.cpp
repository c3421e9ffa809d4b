// StarCoder2 (and Granite code models): NEOX rotary positions, LayerNorms with biases, separate
// q/k/v projections with optional biases, output-projection and GELU feed-forward biases.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef starcoder2{
    .name = "starcoder2",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes}},
};

}  // namespace ox::archs
