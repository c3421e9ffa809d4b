// Mistral 3 (Ministral 3, Mistral Small 3.x text models): llama's layout (optional biases,
// rope_freqs, experts when expert_count > 0) with YaRN rope scaling whose beta_fast, beta_slow and
// log multiplier come from the file, and Llama 4's attention temperature past the original context
// (attention.temperature_scale).
#include <cmath>

#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(s.yarn_beta_fast, file.get_f32_or(p + "rope.scaling.yarn_beta_fast", s.yarn_beta_fast));
  OX_ASSIGN_OR_RETURN(s.yarn_beta_slow, file.get_f32_or(p + "rope.scaling.yarn_beta_slow", s.yarn_beta_slow));
  OX_ASSIGN_OR_RETURN(s.yarn_log_mul, file.get_f32_or(p + "rope.scaling.yarn_log_multiplier", s.yarn_log_mul));
  OX_ASSIGN_OR_RETURN(s.attn_temp_scale, file.get_f32_or(p + "attention.temperature_scale", 0.0f));
  if (!(s.yarn_beta_fast > 0.0f) || !(s.yarn_beta_slow > 0.0f) || !std::isfinite(s.yarn_log_mul) ||
      !std::isfinite(s.attn_temp_scale)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: YaRN betas must be positive, the log multiplier and "
                                                 "attention.temperature_scale finite", file.name().c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef mistral3{
    .name = "mistral3",
    .spec = {.bias = {.qkv = Has::kOptional, .attn_out = Has::kOptional, .ffn = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .moe = true},
    .configure = configure,
    // Real files use YaRN (factor 16 over 16384 positions); the parity model's is small enough that the
    // 21 positions of the test reach past the original context, where the temperature starts.
    .synth_keys = {{"rope.scaling.type", SynthKey::kStr, 0, "yarn"},
                   {"rope.scaling.factor", SynthKey::kF32, 4},
                   {"rope.scaling.original_context_length", SynthKey::kU32, 16},
                   {"rope.scaling.yarn_beta_fast", SynthKey::kF32, 16},
                   {"rope.scaling.yarn_beta_slow", SynthKey::kF32, 0.5},
                   {"rope.scaling.yarn_log_multiplier", SynthKey::kF32, 0.5},
                   {"attention.temperature_scale", SynthKey::kF32, 0.5}},
};

}  // namespace ox::archs
