// OLMo 2 (and OLMo 3, which adds a sliding window): no pre-norms; RMSNorms on each sub-block's
// output before the residual add, and on the whole q and k rows (not per head) before NEOX
// rotation. Window layers (three in four unless the file says otherwise) rotate without the
// global layers' rope scaling, and with the global rope base whatever rope.freq_base_swa says
// (as llama.cpp's graph does).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef olmo2{
    .name = "olmo2",
    .spec = {.pre_norms = false,
             .rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kYes,
             .qk_norms = {.has = Has::kYes, .shape = QkNormShape::kRow},
             .post_norms = true,
             .swa_pattern = 4,
             .rope_scale_swa = 1.0f,
             .rope_base_swa_unused = true},
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32, 2},
                   {"rope.freq_base_swa", SynthKey::kF32, 1000}},
};

}  // namespace ox::archs
