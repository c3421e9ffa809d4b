// Cohere 2 (Command R7B, Command A): Command-R's parallel block with a sliding window on three
// layers in four (unless the file says otherwise) and rotary positions on those layers only: the
// global layers have none, and the rotation uses the global rope base whatever
// rope.freq_base_swa says (as llama.cpp's graph does). The window and logit_scale are required.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(s.logit_scale, file.get_f32("cohere2.logit_scale"));
  if (hp.n_swa <= 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key 'cohere2.attention.sliding_window'", file.name().c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef cohere2{
    .name = "cohere2",
    .spec = {.norm = NormKind::kLayer,
             .residual = Residual::kParallel,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kNo,
             .swa_pattern = 4,
             .rope_swa_only = true,
             .rope_base_swa_unused = true},
    .configure = configure,
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32, 2},
                   {"logit_scale", SynthKey::kF32, 0.5},
                   {"rope.freq_base_swa", SynthKey::kF32, 1000}},
};

}  // namespace ox::archs
