// MiniCPM (1/2/4): granite's graph in llama.cpp: embeddings times embedding_scale, sub-block
// outputs times residual_scale, logits divided by logit_scale, each from the file or else MiniCPM's
// constants (12, 1.4 / sqrt(n_layer), 256 / n_embd). Always rotary (no rope.scaling.finetuned switch).
#include <cmath>

#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(s.embd_mult, file.get_f32_or(p + "embedding_scale", 12.0f));
  OX_ASSIGN_OR_RETURN(s.residual_mult,
                      file.get_f32_or(p + "residual_scale", 1.4f / std::sqrt(static_cast<float>(hp.n_layer))));
  OX_ASSIGN_OR_RETURN(const float logit_scale, file.get_f32_or(p + "logit_scale", 256.0f / static_cast<float>(hp.n_embd)));
  if (!std::isfinite(logit_scale) || logit_scale == 0.0f || !std::isfinite(s.residual_mult) || !std::isfinite(s.embd_mult)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: minicpm's logit_scale must be finite and non-zero, its other "
                                                 "scales finite", file.name().c_str()));
  }
  s.logit_mult = 1.0f / logit_scale;
  return Status::ok();
}

}  // namespace

extern const ArchDef minicpm{
    .name = "minicpm",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional},
             .rope_freqs = Has::kOptional},
    .configure = configure,
    // No scale keys: the constants older MiniCPM files rely on.
};

}  // namespace ox::archs
