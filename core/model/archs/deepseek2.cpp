// DeepSeek-V2 / V3 (deepseek2; also Kimi-K2, GLM-4.7-Flash, GigaChat3, Kanana-2 files): multi-head
// latent attention (forward_deepseek2.cpp) with NORM rotary on n_rot of each head's dimensions, YaRN
// with DeepSeek's mscale folded into the attention scale; the first leading_dense_block_count layers
// dense, the others with routed experts (softmax or sigmoid scores, optional choice bias exp_probs_b,
// group-limited routing, renormalisation and scale from the expert_* keys) plus expert_shared_count
// shared experts; Mistral Large 3's attention temperature; multi-token-prediction blocks checked and
// not run, or left out (ArchSpec::nextn); experts' gate and up projections apart or fused
// (ffn_gate_up_exps, MoeSpec::gate_up_either).
#include <cmath>

#include "core/model/arch_registry.h"
#include "core/model/mla.h"
#include "core/model/moe.h"

namespace ox::archs {
namespace {

// llama.cpp reads no q_lora_rank at these shapes (DeepSeek-V2-Lite, GigaChat3-10B, Kanana-2-30B): q is attn_q.
bool lite_shape(const HParams& hp) {
  return hp.n_layer == 27 || hp.n_layer == 26 || (hp.n_layer == 48 && hp.n_vocab == 128256);
}

void fix_hparams(HParams& hp) {
  if (lite_shape(hp)) hp.n_lora_q = 0;
}

Status missing_key(const gguf::GgufFile& f, const std::string& key) {
  return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s'", f.name().c_str(), key.c_str()));
}

// The latent attention's shapes, as llama.cpp's loader needs them.
Status check_mla(const gguf::GgufFile& f, const HParams& hp) {
  const std::string p = hp.arch + ".";
  const char* file = f.name().c_str();
  if (hp.n_lora_kv <= 0) return missing_key(f, p + "attention.kv_lora_rank");
  const std::string q_lora = p + "attention.q_lora_rank";
  if (!lite_shape(hp) && f.find(q_lora) == nullptr) return missing_key(f, q_lora);
  if ((hp.head_dim_k_mla > 0) != (hp.head_dim_v_mla > 0)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.key_length_mla' and 'value_length_mla' go together",
                                                 file, p.c_str()));
  }
  if (hp.mla_head_dim_k() - hp.n_rot < 1) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: key heads of %d leave nothing beside the %d rotary dimensions",
                                                 file, hp.mla_head_dim_k(), hp.n_rot));
  }
  if (hp.mla_absorbed()) {  // the latent cache: one "head" [c | k_rot] whose first kv_lora_rank values are the value
    if (hp.n_head_kv != 1 || hp.head_dim_k != hp.n_lora_kv + hp.n_rot || hp.head_dim_v != hp.n_lora_kv) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("%s: with key_length_mla, '%sattention.head_count_kv' must be 1, key_length kv_lora_rank + "
                          "rope.dimension_count (%d) and value_length kv_lora_rank (%d); the file has %d, %d, %d",
                          file, p.c_str(), hp.n_lora_kv + hp.n_rot, hp.n_lora_kv, hp.n_head_kv, hp.head_dim_k,
                          hp.head_dim_v));
    }
  } else if (hp.n_head_kv != hp.n_head) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: with attn_kv_b, '%sattention.head_count_kv' (%d) must be the "
                                                 "head count (%d)", file, p.c_str(), hp.n_head_kv, hp.n_head));
  }
  return Status::ok();
}

// Mistral Large 3's attention temperature (llama.cpp's f_attn_temp_scale, n_attn_temp_floor_scale).
Status read_temperature(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(spec.attn_temp_scale, f.get_f32_or(p + "attention.temperature_scale", 0.0f));
  OX_ASSIGN_OR_RETURN(const uint32_t length, f.get_u32_or(p + "attention.temperature_length", 0));
  if (!std::isfinite(spec.attn_temp_scale)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.temperature_scale' is not finite", f.name().c_str(),
                                                 p.c_str()));
  }
  if (spec.attn_temp_scale != 0.0f && (length == 0 || length > (1u << 30))) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.temperature_scale' needs a positive "
                                                 "'%sattention.temperature_length'", f.name().c_str(), p.c_str(), p.c_str()));
  }
  spec.attn_temp_length = static_cast<int>(length);
  return Status::ok();
}

// kq_scale and the rotary magnitude of llama.cpp's deepseek2 graph and context: YaRN's
// mscale(factor, mscale_all_dim) squared goes into the attention scale, and the rotation keeps magnitude 1
// (llama.cpp's special case mscale = mscale_all_dim, which ArchSpec's yarn_log_mul 1 gives).
Status scales(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  const std::string key = hp.arch + ".rope.scaling.yarn_log_multiplier";
  OX_ASSIGN_OR_RETURN(float log_mul, f.get_f32_or(key, 0.0f));
  log_mul /= 0.1f;  // the converter wrote 0.1 * mscale_all_dim
  if (!std::isfinite(log_mul)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' is not finite", f.name().c_str(), key.c_str()));
  }
  const float freq_scale = hp.rope_freq_scale;
  float attn_factor = 1.0f;  // llama_context's yarn_attn_factor
  if (hp.rope_scaling == RopeScalingType::kYarn) {
    const float factor = 1.0f / freq_scale;
    const float mscale_1 = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;
    attn_factor = log_mul != 0.0f ? 1.0f : mscale_1;
    attn_factor *= 1.0f / (1.0f + 0.1f * std::log(factor));
    if (log_mul != 0.0f) spec.yarn_log_mul = 1.0f;
  }
  attn_factor *= hp.rope_attn_factor;
  const float attn_factor_org = attn_factor * (1.0f + 0.1f * std::log(1.0f / freq_scale));
  const float mscale = attn_factor_org * (1.0f + 0.1f * log_mul * std::log(1.0f / freq_scale));
  spec.attn_scale = 1.0f * mscale * mscale / std::sqrt(static_cast<float>(hp.mla_head_dim_k()));
  return Status::ok();
}

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  const std::string p = hp.arch + ".";
  if (f.find(p + "expert_shared_count") == nullptr) return missing_key(f, p + "expert_shared_count");
  OX_TRY(check_mla(f, hp));
  OX_TRY(read_temperature(f, hp, spec));
  // No expert_gating_func (DeepSeek V2 / V2.5 files): softmax, except GLM-4.7-Flash's shape, as llama.cpp.
  OX_ASSIGN_OR_RETURN(const uint32_t gating, f.get_u32_or(p + "expert_gating_func", 0));
  const bool glm47_flash = (hp.n_layer == 47 || hp.n_layer == 48) && hp.n_vocab == 154880;
  if (gating == 0 && glm47_flash) spec.experts.gating = MoeGating::kSigmoid;
  OX_TRY(read_moe_keys(f, hp, {.scale = true, .norm = true, .gating = MoeKeys::kOptional}, spec.experts));
  return scales(f, hp, spec);
}

}  // namespace

extern const ArchDef deepseek2{
    .name = "deepseek2",
    .spec = {.qkv_either = false,  // MLA: no q/k/v projections
             .mla = true,
             .moe = true,
             .experts = {.norm_w = false,
                         .ff = ExpertFf::kRequired,
                         .shared = SharedFf::kExpTimesCount,
                         .probs_bias = Has::kOptional,
                         .leading_dense = true,
                         .gate_up_either = true},
             .nextn = {.on = true, .trunk_only = true, .gate_up_exps_optional = true}},
    .configure = configure,
    .forward = forward_deepseek2,
    // Every feature on: q through its low-rank pair, the split attn_k_b / attn_v_b, a dense first
    // layer, sigmoid routing with a choice bias in 2 groups of 2, a shared expert, YaRN with DeepSeek's
    // mscale, the attention temperature (from position 4 on). (deepseek2@lite: 27 layers, where llama.cpp takes attn_q instead of the pair;
    // deepseek2@kv_b: --variant kv_b, the attn_kv_b layout of files converted before the split.)
    .synth_keys = {{.key = "attention.head_count_kv", .value = 1, .variant = "!kv_b"},
                   {"attention.q_lora_rank", SynthKey::kU32, 128},
                   {"attention.kv_lora_rank", SynthKey::kU32, 128},
                   {.key = "attention.key_length", .value = 160, .variant = "!kv_b"},
                   {.key = "attention.value_length", .value = 128, .variant = "!kv_b"},
                   {.key = "attention.key_length_mla", .value = 64, .variant = "!kv_b"},
                   {.key = "attention.value_length_mla", .value = 64, .variant = "!kv_b"},
                   // deepseek2@kv_b: the older layout, attn_kv_b expanding c for every head
                   {.key = "attention.head_count_kv", .value = 4, .variant = "kv_b"},
                   {.key = "attention.key_length", .value = 64, .variant = "kv_b"},
                   {.key = "attention.value_length", .value = 64, .variant = "kv_b"},
                   {"rope.dimension_count", SynthKey::kU32, 32},
                   {"rope.scaling.type", SynthKey::kStr, 0, "yarn"},
                   {"rope.scaling.factor", SynthKey::kF32, 4},
                   {"rope.scaling.original_context_length", SynthKey::kU32, 16},
                   {"rope.scaling.yarn_log_multiplier", SynthKey::kF32, 0.0707},
                   {"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"expert_shared_count", SynthKey::kU32, 1},
                   {"leading_dense_block_count", SynthKey::kU32, 1},
                   {"expert_weights_norm", SynthKey::kBool, 1},
                   {"expert_weights_scale", SynthKey::kF32, 2.5},
                   {"expert_gating_func", SynthKey::kU32, 2},
                   {"expert_group_count", SynthKey::kU32, 2},
                   {"expert_group_used_count", SynthKey::kU32, 1},
                   {"attention.temperature_scale", SynthKey::kF32, 0.5},
                   {"attention.temperature_length", SynthKey::kU32, 4},
                   // deepseek2@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
    .fix_hparams = fix_hparams,
};

}  // namespace ox::archs
