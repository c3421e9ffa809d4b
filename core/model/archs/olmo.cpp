// OLMo (1): llama-shaped (SwiGLU, normal rotary positions) with LayerNorms that have neither
// weight nor bias, and q, k, v optionally clamped to [-c, c] (olmo.attention.clamp_kqv).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(s.clamp_kqv, file.get_f32_or("olmo.attention.clamp_kqv", 0.0f));
  return Status::ok();
}

}  // namespace

extern const ArchDef olmo{
    .name = "olmo",
    .spec = {.norm = NormKind::kLayer, .norm_affine = false, .bias = {.qkv = Has::kOptional}},
    .configure = configure,
    .synth_keys = {{"attention.clamp_kqv", SynthKey::kF32, 1.5}},
};

}  // namespace ox::archs
