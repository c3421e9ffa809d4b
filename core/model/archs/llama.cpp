// Llama 1/2/3, TinyLlama, Mistral (its sliding_window is ignored, as llama.cpp does), Mixtral
// (expert_count > 0): the spec's defaults. Llama 3 adds rope_freqs (per-frequency divisors); the
// q/k/v/output and feed-forward biases some derived models carry are optional.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef llama{
    .name = "llama",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .moe = true},
};

}  // namespace ox::archs
