// Phi-2: one LayerNorm feeds attention and feed-forward in parallel; fused qkv; partial NEOX
// rotary positions (rope.dimension_count of each head); GELU feed-forward; biases everywhere,
// the output projection's included.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef phi2{
    .name = "phi2",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kParallel,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes, .output = Has::kYes},
             .fused_qkv = true,
             .scale_q_first = true},
    .synth_keys = {{"rope.dimension_count", SynthKey::kU32, 16}},
};

}  // namespace ox::archs
