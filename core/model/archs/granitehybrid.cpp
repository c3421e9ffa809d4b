// Granite 4.0 hybrid: Mamba-2 layers and GQA attention layers (per-layer head_count_kv, 0 on the
// Mamba-2 ones), every layer followed by a SwiGLU feed-forward; Granite's embedding, residual,
// attention and logit scales (forward_granite_hybrid.cpp). The experts variant is not supported.
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  OX_TRY(check_ssm_hparams(file, hp, Recurrent::kMamba2));
  if (hp.n_expert > 0) {
    return error(ErrorCode::kUnsupported, strfmt("%s: granitehybrid with experts ('%s.expert_count' %d) is not "
                                                 "supported",
                                                 file.name().c_str(), hp.arch.c_str(), hp.n_expert));
  }
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(s.embd_mult, file.get_f32_or(p + "embedding_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(s.residual_mult, file.get_f32_or(p + "residual_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(s.logit_div, file.get_f32_or(p + "logit_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(s.attn_scale, file.get_f32_or(p + "attention.scale", 0.0f));
  return Status::ok();
}

}  // namespace

extern const ArchDef granitehybrid{
    .name = "granitehybrid",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .recurrent = Recurrent::kMamba2,
             .hybrid = true,
             .ssm_conv_bias = Has::kOptional},
    .configure = configure,
    .forward = forward_granite_hybrid,
    .synth_keys = {{"attention.head_count_kv", SynthKey::kU32Layers, 0, "0,2"},
                   {"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 512},
                   {"ssm.state_size", SynthKey::kU32, 16},
                   {"ssm.time_step_rank", SynthKey::kU32, 8},
                   {"ssm.group_count", SynthKey::kU32, 2},
                   {"embedding_scale", SynthKey::kF32, 2.0},
                   {"residual_scale", SynthKey::kF32, 0.8},
                   {"logit_scale", SynthKey::kF32, 0.5},
                   {"attention.scale", SynthKey::kF32, 0.15}},
};

}  // namespace ox::archs
