// BERT encoders (bge, MiniLM, cross-encoder rerankers): learned positions plus token type 0 plus a
// LayerNorm of the embeddings, post-norm blocks (attn_output_norm, layer_output_norm), GELU
// feed-forward, biases, non-causal attention, an optional classification head (cls, cls.output).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef bert{
    .name = "bert",
    .spec = {.norm = NormKind::kLayer,
             .pre_norms = false,
             .rope = false,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kPostNorm,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional, .norm = Has::kYes},
             .output = Has::kNo,
             .embd_norm = true,
             .causal_attention = false,
             .token_types = Has::kOptional,
             .cls_head = {.dense = Has::kOptional,
                          .dense_bias = Has::kOptional,
                          .out = Has::kOptional,
                          .out_bias = Has::kOptional}},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 2}},  // cls, as bge's files say
};

}  // namespace ox::archs
