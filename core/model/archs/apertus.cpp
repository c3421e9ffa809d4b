// Apertus: llama-like attention with q/k head norms before NEOX rotation, an optional
// attn_output.bias and optional rope_freqs; an ungated feed-forward through xIELU, whose learned
// parameters are global keys xielu.alpha_n / alpha_p / beta / eps (one value, or one per layer).
// The optional q/k norm biases llama.cpp loads are never applied there, so not read here.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef apertus{
    .name = "apertus",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kXielu,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional},
             .output = Has::kYes,
             .rope_freqs = Has::kOptional,
             .qk_norm = true},
    .synth_keys = {{.key = "xielu.alpha_n", .type = SynthKey::kF32, .value = 0.8, .global = true},
                   {.key = "xielu.alpha_p", .type = SynthKey::kF32, .value = 0.8, .global = true},
                   {.key = "xielu.beta", .type = SynthKey::kF32, .value = 0.5, .global = true},
                   {.key = "xielu.eps", .type = SynthKey::kF32, .value = -1e-6, .global = true}},
};

}  // namespace ox::archs
