// Qwen3: Qwen2 without the biases, with every q and k head RMS-normalised before rotation and a
// head size (attention.key_length) that need not be n_embd / n_head. Qwen3-Reranker files add
// cls.output (the lm head's "yes" and "no" rows): rank pooling takes the last token through it and
// a softmax, as llama.cpp does for qwen3.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef qwen3{
    .name = "qwen3",
    .spec = {.rope_style = RopeStyle::kNeox,
             .qk_norm = true,
             .cls_head = {.out = Has::kOptional, .last_token = true, .softmax = true}},
    .synth_keys = {{"classifier.output_labels", SynthKey::kStrList, 0, "yes,no"}},
};

}  // namespace ox::archs
