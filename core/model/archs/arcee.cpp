// Arcee (AFM): llama's layout with an ungated feed-forward, relu(x Wup)^2 Wdown (no ffn_gate),
// and optional rope_freqs.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef arcee{
    .name = "arcee",
    .spec = {.ffn = FfnKind::kReluSqr, .bias = {.qkv = Has::kOptional}, .rope_freqs = Has::kOptional},
};

}  // namespace ox::archs
