// Jais: ALiBi (attention.max_alibi_bias; no positions at all without it), LayerNorms with
// biases, fused qkv, SwiGLU with biases, biases everywhere but the output projection, and
// attention scores scaled by 1/head_dim rather than 1/sqrt(head_dim).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(s.alibi_max_bias, file.get_f32_or("jais.attention.max_alibi_bias", 0.0f));
  s.attn_scale = 1.0f / static_cast<float>(hp.head_dim_k);
  return Status::ok();
}

}  // namespace

extern const ArchDef jais{
    .name = "jais",
    .spec = {.norm = NormKind::kLayer,
             .rope = false,
             .position_embd = Has::kNo,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes},
             .output = Has::kYes,
             .fused_qkv = true,
             .qkv_either = false},
    .configure = configure,
    .synth_keys = {{"attention.max_alibi_bias", SynthKey::kF32, 8}},
};

}  // namespace ox::archs
