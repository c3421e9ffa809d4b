// Falcon: multi-query attention through a fused qkv, NEOX rotary positions, LayerNorm, GELU
// feed-forward, no projection biases. Attention and feed-forward run in parallel from one norm
// (7B) or from two (40B: the file has attn_norm_2, which feeds the feed-forward), as llama.cpp
// decides by that tensor.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec& s) {
  if (file.find_tensor(tensor_name(Tn::kAttnNorm2, 0)) != nullptr) {
    s.residual = Residual::kParallelTwoNorms;
    s.ffn_norm = Tn::kAttnNorm2;
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef falcon{
    .name = "falcon",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kParallel,
             .bias = {.norm = Has::kYes},
             .fused_qkv = true,
             .qkv_either = false},
    .configure = configure,
};

}  // namespace ox::archs
