// OLMoE: llama's blocks with RMSNorms over the whole q and k rows (not per head) before NEOX
// rotation, a required output projection, and a softmax router whose chosen weights are not
// renormalised (build_moe_ffn's norm_w false).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef olmoe{
    .name = "olmoe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kYes,
             .qk_norms = {.has = Has::kYes, .shape = QkNormShape::kRow},
             .moe = true,
             .experts = {.norm_w = false}},
    // q and k rows of the same width (the file's k norm is n_embd wide): as many KV heads as heads.
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"attention.head_count_kv", SynthKey::kU32, 4}},
};

}  // namespace ox::archs
