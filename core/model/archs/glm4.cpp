// GLM-4 (0414): llama-shaped with norms on each sub-block's output too (as gemma2), the SwiGLU
// gate and up projections fused into ffn_up (rows [gate | up]), partial normal rotary positions
// (rope.dimension_count of each head) and optional q/k/v biases. Files with M-RoPE sections
// (rope.dimension_sections: the vision models) are refused. Multi-token-prediction blocks
// (nextn_predict_layers) are checked and not run; llama.cpp requires their tensors (ArchSpec::nextn).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec&) {
  if (file.find("glm4.rope.dimension_sections") != nullptr) {
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: GLM-4 with M-RoPE (glm4.rope.dimension_sections) is not supported", file.name().c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef glm4{
    .name = "glm4",
    .spec = {.bias = {.qkv = Has::kOptional}, .fused_gate_up = true, .post_norms = true, .nextn = {.on = true}},
    .configure = configure,
    .synth_keys = {{"rope.dimension_count", SynthKey::kU32, 32},
                   // glm4@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
};

}  // namespace ox::archs
