// Seed-OSS: llama's layout with NEOX rotary positions, optional q/k/v biases, a head size of its
// own (attention.key_length), and the feed-forward's norm stored as post_attention_norm (it is the
// pre-FFN norm: llama.cpp applies it to the residual stream before the feed-forward).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef seed_oss{
    .name = "seed_oss",
    .spec = {.rope_style = RopeStyle::kNeox, .ffn_norm = Tn::kAttnPostNorm, .bias = {.qkv = Has::kOptional}},
    .synth_keys = {{"attention.key_length", SynthKey::kU32, 128},
                   {"attention.value_length", SynthKey::kU32, 128},
                   {"rope.dimension_count", SynthKey::kU32, 128}},
};

}  // namespace ox::archs
