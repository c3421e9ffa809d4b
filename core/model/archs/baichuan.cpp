// Baichuan (1 and 2): llama's layout with a required output projection; positions as llama.cpp
// decides them by depth: rotary at 32 layers (7B), ALiBi with maximum bias 8 at 40 (13B), and
// neither at any other depth (llama.cpp's unknown model type).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile&, const HParams& hp, ArchSpec& s) {
  if (hp.n_layer == 32) return Status::ok();
  s.no_rope_layer_step = 1;
  if (hp.n_layer == 40) s.alibi_max_bias = 8.0f;
  return Status::ok();
}

}  // namespace

extern const ArchDef baichuan{
    .name = "baichuan",
    .spec = {.bias = {.qkv = Has::kOptional}, .output = Has::kYes},
    .configure = configure,
};

}  // namespace ox::archs
