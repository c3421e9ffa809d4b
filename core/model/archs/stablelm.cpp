// StableLM (2): LayerNorms with biases, SwiGLU, partial NEOX rotary positions
// (rope.dimension_count of each head), optional q/k/v biases; StableLM 2 12B adds a LayerNorm of
// every q and k head with each head's own weights, and, having no ffn_norm, runs attention and
// feed-forward in parallel from one norm (llama.cpp decides by that tensor).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec& s) {
  if (file.find_tensor(tensor_name(Tn::kFfnNorm, 0)) == nullptr) s.residual = Residual::kParallel;
  return Status::ok();
}

}  // namespace

extern const ArchDef stablelm{
    .name = "stablelm",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional, .norm = Has::kYes},
             .output = Has::kYes,
             .qk_norms = {.has = Has::kOptional, .kind = NormKind::kLayer, .shape = QkNormShape::kPerHead}},
    .configure = configure,
    .synth_keys = {{"rope.dimension_count", SynthKey::kU32, 16}},
};

}  // namespace ox::archs
