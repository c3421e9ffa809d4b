// nomic-bert (nomic-embed-text): bert's post-norm encoder with rotary positions (neox) instead of
// learned ones, a fused qkv projection and a SwiGLU feed-forward (whose biases llama.cpp's graph
// does not use, so none are loaded).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef nomic_bert{
    .name = "nomic-bert",
    .spec = {.norm = NormKind::kLayer,
             .pre_norms = false,
             .position_embd = Has::kNo,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kSwiGlu,
             .residual = Residual::kPostNorm,
             .bias = {.attn_out = Has::kOptional, .norm = Has::kYes},
             .output = Has::kNo,
             .fused_qkv = true,
             .embd_norm = true,
             .causal_attention = false,
             .token_types = Has::kOptional},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1}},  // mean, as nomic-embed's files say
};

}  // namespace ox::archs
