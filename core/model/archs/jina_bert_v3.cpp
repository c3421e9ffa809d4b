// jina-bert-v3 (jina-embeddings-v3: XLM-RoBERTa with rotary positions): a post-norm encoder with
// neox rotary positions, optional qkv / output biases and bert's GELU feed-forward. The model's
// task LoRA adapters are not supported (oxidize loads no adapters): this is the base model.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef jina_bert_v3{
    .name = "jina-bert-v3",
    .spec = {.norm = NormKind::kLayer,
             .pre_norms = false,
             .position_embd = Has::kNo,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kPostNorm,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional, .norm = Has::kYes},
             .output = Has::kNo,
             .fused_qkv = true,
             .embd_norm = true,
             .causal_attention = false,
             .token_types = Has::kOptional},
    .synth_keys = {{"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1}},  // mean, as jina-embeddings-v3's files say
};

}  // namespace ox::archs
