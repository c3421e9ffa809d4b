// BLOOM: ALiBi instead of position embeddings (max bias 8, fixed as in llama.cpp), a LayerNorm of
// the embeddings (token_embd_norm), LayerNorms with biases, fused qkv, GELU feed-forward, biases
// everywhere but the output projection.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef bloom{
    .name = "bloom",
    .spec = {.norm = NormKind::kLayer,
             .rope = false,
             .position_embd = Has::kNo,
             .alibi_max_bias = 8.0f,
             .ffn = FfnKind::kGelu,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes},
             .fused_qkv = true,
             .qkv_either = false,
             .embd_norm = true},
};

}  // namespace ox::archs
