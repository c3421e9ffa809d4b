// nomic-bert-moe (nomic-embed-text-v2-moe): nomic-bert's post-norm encoder with rotary positions,
// but bert's GELU feed-forward with biases, and on every moe_every_n_layers-th layer (l % n == 1)
// experts instead: ungated GELU experts (ffn_up_exps, ffn_down_exps), chosen by a softmax router
// and weighted by their probabilities unnormalised (llama.cpp's build_moe_ffn, no weight scale).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef nomic_bert_moe{
    .name = "nomic-bert-moe",
    .spec = {.norm = NormKind::kLayer,
             .pre_norms = false,
             .position_embd = Has::kNo,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kPostNorm,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional, .norm = Has::kYes},
             .output = Has::kNo,
             .fused_qkv = true,
             .moe = true,
             .experts = {.norm_w = false, .act = ExpertAct::kGelu, .every_n_layers = true},
             .embd_norm = true,
             .causal_attention = false,
             .token_types = Has::kOptional},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1},  // mean, as nomic-embed's files say
                   {"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"moe_every_n_layers", SynthKey::kU32, 2}},  // layer 1 of 2 has experts
};

}  // namespace ox::archs
