// Granite MoE (granite-3.x MoE, granite-4 "shared"): llama-shaped with Granite's multipliers from
// the file (embedding_scale, residual_scale, attention.scale, logit_scale: logits are divided by
// it), mixtral-style experts and a shared expert where expert_shared_feed_forward_length > 0.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  const std::string p = hp.arch + ".";
  if (f.find(p + "logit_scale") == nullptr) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%slogit_scale'", f.name().c_str(), p.c_str()));
  }
  OX_ASSIGN_OR_RETURN(spec.logit_div, f.get_f32_or(p + "logit_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(spec.residual_mult, f.get_f32_or(p + "residual_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(spec.embd_mult, f.get_f32_or(p + "embedding_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(spec.attn_scale, f.get_f32_or(p + "attention.scale", 0.0f));
  return Status::ok();
}

}  // namespace

extern const ArchDef granitemoe{
    .name = "granitemoe",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .moe = true,
             .experts = {.shared = SharedFf::kIfShexpKey}},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_shared_feed_forward_length", SynthKey::kU32, 256},
                   {"logit_scale", SynthKey::kF32, 1.25},
                   {"residual_scale", SynthKey::kF32, 0.5},
                   {"embedding_scale", SynthKey::kF32, 2},
                   {"attention.scale", SynthKey::kF32, 0.1}},
};

}  // namespace ox::archs
