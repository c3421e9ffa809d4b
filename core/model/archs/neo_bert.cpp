// neo-bert (NeoBERT): a pre-norm encoder (RMSNorm before attention and feed-forward, no biases),
// rotary positions, a fused qkv projection, SwiGLU whose ffn_up holds [gate | up], a final RMSNorm
// named enc.output_norm and bert's optional classification head.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef neo_bert{
    .name = "neo-bert",
    .spec = {.output = Has::kNo,
             .fused_qkv = true,
             .qkv_either = false,
             .fused_gate_up = true,
             .output_norm = Tn::kEncOutputNorm,
             .causal_attention = false,
             .cls_head = {.dense = Has::kOptional,
                          .dense_bias = Has::kOptional,
                          .out = Has::kOptional,
                          .out_bias = Has::kOptional}},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 2}},  // cls, as NeoBERT's files say
};

}  // namespace ox::archs
