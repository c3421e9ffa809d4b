// Command-R (Cohere): one LayerNorm without bias feeds attention and feed-forward in parallel;
// SwiGLU; normal rotary positions; tied output scaled by command-r.logit_scale. Models of 64
// layers or more (Command R+) add a LayerNorm of every q and k head with each head's own weights,
// as llama.cpp decides by the layer count.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(s.logit_scale, file.get_f32_or("command-r.logit_scale", 0.0f));
  if (hp.n_layer >= 64) s.qk_norms = {.has = Has::kYes, .kind = NormKind::kLayer, .shape = QkNormShape::kPerHead};
  return Status::ok();
}

}  // namespace

extern const ArchDef command_r{
    .name = "command-r",
    .spec = {.norm = NormKind::kLayer,
             .residual = Residual::kParallel,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kNo},
    .configure = configure,
    .synth_keys = {{"logit_scale", SynthKey::kF32, 0.5}},
};

}  // namespace ox::archs
