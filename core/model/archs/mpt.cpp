// MPT: ALiBi (attention.max_alibi_bias; none without it) and, in some files, learned positions as
// well; LayerNorms, fused qkv optionally clamped (attention.clamp_kqv), GELU feed-forward, every
// bias optional. Refused: the LayerNorms of q and k some files carry (llama.cpp aborts on them: it
// reshapes a view of the fused qkv) and AWQ activation scales (ffn_act), rather than ignored.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(s.clamp_kqv, file.get_f32_or("mpt.attention.clamp_kqv", 0.0f));
  OX_ASSIGN_OR_RETURN(s.alibi_max_bias, file.get_f32_or("mpt.attention.max_alibi_bias", 0.0f));
  for (const char* name : {"blk.0.attn_q_norm.weight", "blk.0.ffn_act.scales"}) {
    if (file.find_tensor(name) != nullptr) {
      return error(ErrorCode::kUnsupported, strfmt("%s: MPT with tensor '%s' is not supported", file.name().c_str(), name));
    }
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef mpt{
    .name = "mpt",
    .spec = {.norm = NormKind::kLayer,
             .rope = false,
             .position_embd = Has::kOptional,
             .ffn = FfnKind::kGelu,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional, .norm = Has::kOptional},
             .fused_qkv = true,
             .qkv_either = false},
    .configure = configure,
    .synth_keys = {{"attention.max_alibi_bias", SynthKey::kF32, 8}, {"attention.clamp_kqv", SynthKey::kF32, 2}},
};

}  // namespace ox::archs
