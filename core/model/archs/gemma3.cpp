// Gemma 3: Gemma 2 with q/k head norms instead of soft-capping, five local layers per global one
// (unless the file says otherwise), and the local layers' own rope base (10000 unless
// rope.freq_base_swa says otherwise) without the global layers' rope scaling.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef gemma3{
    .name = "gemma3",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .qk_norm = true,
             .post_norms = true,
             .embd_scale = true,
             .scale_q_first = true,
             .swa_pattern = 6,
             .rope_base_swa = 10000.0f,
             .rope_scale_swa = 1.0f},
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32, 2},
                   {"rope.freq_base", SynthKey::kF32, 1000000}},
};

}  // namespace ox::archs
