// Granite 3.x (dense): llama's layout with four multipliers from the file: embeddings
// (embedding_scale), each sub-block's output before its residual add (residual_scale), q.k
// (attention.scale) and the logits (divided by logit_scale, which is required). Rotary positions
// unless rope.scaling.finetuned is false (llama.cpp's switch for this architecture).
#include <cmath>

#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(const float logit_scale, file.get_f32(p + "logit_scale"));
  OX_ASSIGN_OR_RETURN(s.residual_mult, file.get_f32_or(p + "residual_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(s.embd_mult, file.get_f32_or(p + "embedding_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(s.attn_scale, file.get_f32_or(p + "attention.scale", 0.0f));
  OX_ASSIGN_OR_RETURN(const bool rope, file.get_bool_or(p + "rope.scaling.finetuned", true));
  if (!std::isfinite(logit_scale) || logit_scale == 0.0f || !std::isfinite(s.residual_mult) ||
      !std::isfinite(s.embd_mult) || !(s.attn_scale >= 0.0f)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: granite's logit_scale must be finite and non-zero, its other "
                                                 "scales finite", file.name().c_str()));
  }
  s.logit_mult = 1.0f / logit_scale;
  if (!rope) s.no_rope_layer_step = 1;
  return Status::ok();
}

}  // namespace

extern const ArchDef granite{
    .name = "granite",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional},
             .rope_freqs = Has::kOptional},
    .configure = configure,
    .synth_keys = {{"logit_scale", SynthKey::kF32, 0.5},
                   {"residual_scale", SynthKey::kF32, 0.5},
                   {"embedding_scale", SynthKey::kF32, 4},
                   {"attention.scale", SynthKey::kF32, 0.2}},
};

}  // namespace ox::archs
