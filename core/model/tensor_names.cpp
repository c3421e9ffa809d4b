// kTensorNames: the one list of GGUF tensor names (llama.cpp's LLM_TENSOR_NAMES spellings).
#include "core/model/tensor_names.h"

#include "core/base/status.h"

namespace ox {
namespace {

using G = QuantGroup;
constexpr TensorNameRow kTensorNames[] = {
    {Tn::kTokenEmbd, "token_embd", false, false, G::kTokenEmbd},
    {Tn::kPositionEmbd, "position_embd", false, false, G::kNone},
    {Tn::kOutputNorm, "output_norm", false, true, G::kNone},
    {Tn::kOutput, "output", false, false, G::kOutput},
    {Tn::kRopeFreqs, "rope_freqs", false, true, G::kNone},
    {Tn::kTokenEmbdNorm, "token_embd_norm", false, true, G::kNone},
    {Tn::kAttnNorm, "attn_norm", true, true, G::kNone},
    {Tn::kAttnNorm2, "attn_norm_2", true, true, G::kNone},
    {Tn::kAttnQ, "attn_q", true, false, G::kAttnQ},
    {Tn::kAttnK, "attn_k", true, false, G::kAttnK},
    {Tn::kAttnV, "attn_v", true, false, G::kAttnV},
    {Tn::kAttnQkv, "attn_qkv", true, false, G::kAttnV},
    {Tn::kAttnOutput, "attn_output", true, false, G::kAttnOutput},
    {Tn::kAttnQNorm, "attn_q_norm", true, true, G::kNone},
    {Tn::kAttnKNorm, "attn_k_norm", true, true, G::kNone},
    {Tn::kAttnPostNorm, "post_attention_norm", true, true, G::kNone},
    {Tn::kFfnNorm, "ffn_norm", true, true, G::kNone},
    {Tn::kFfnGate, "ffn_gate", true, false, G::kFfnGate},
    {Tn::kFfnUp, "ffn_up", true, false, G::kFfnUp},
    {Tn::kFfnDown, "ffn_down", true, false, G::kFfnDown},
    {Tn::kFfnPostNorm, "post_ffw_norm", true, true, G::kNone},
    {Tn::kFfnGateInp, "ffn_gate_inp", true, false, G::kNone},
    {Tn::kFfnGateExps, "ffn_gate_exps", true, false, G::kFfnGate},
    {Tn::kFfnUpExps, "ffn_up_exps", true, false, G::kFfnUp},
    {Tn::kFfnDownExps, "ffn_down_exps", true, false, G::kFfnDown},
    {Tn::kSsmIn, "ssm_in", true, false, G::kNone},
    {Tn::kSsmConv1d, "ssm_conv1d", true, false, G::kNone},
    {Tn::kSsmX, "ssm_x", true, false, G::kNone},
    {Tn::kSsmDt, "ssm_dt", true, false, G::kNone},
    {Tn::kSsmA, "ssm_a", true, false, G::kNone, true},
    {Tn::kSsmD, "ssm_d", true, false, G::kNone, true},
    {Tn::kSsmNorm, "ssm_norm", true, false, G::kNone},
    {Tn::kSsmOut, "ssm_out", true, false, G::kNone},
    {Tn::kOutputNormLfm2, "token_embd_norm", false, true, G::kNone},
    {Tn::kShortConvConv, "shortconv.conv", true, false, G::kNone},
    {Tn::kShortConvInProj, "shortconv.in_proj", true, false, G::kNone},
    {Tn::kShortConvOutProj, "shortconv.out_proj", true, false, G::kNone},
    {Tn::kTimeMixW0, "time_mix_w0", true, true, G::kNone},
    {Tn::kTimeMixW1, "time_mix_w1", true, false, G::kNone},
    {Tn::kTimeMixW2, "time_mix_w2", true, false, G::kNone},
    {Tn::kTimeMixA0, "time_mix_a0", true, true, G::kNone},
    {Tn::kTimeMixA1, "time_mix_a1", true, false, G::kNone},
    {Tn::kTimeMixA2, "time_mix_a2", true, false, G::kNone},
    {Tn::kTimeMixV0, "time_mix_v0", true, true, G::kNone},
    {Tn::kTimeMixV1, "time_mix_v1", true, false, G::kNone},
    {Tn::kTimeMixV2, "time_mix_v2", true, false, G::kNone},
    {Tn::kTimeMixG1, "time_mix_g1", true, false, G::kNone},
    {Tn::kTimeMixG2, "time_mix_g2", true, false, G::kNone},
    {Tn::kTimeMixLerpFused, "time_mix_lerp_fused", true, false, G::kNone},
    {Tn::kTimeMixKK, "time_mix_k_k", true, true, G::kNone},
    {Tn::kTimeMixKA, "time_mix_k_a", true, true, G::kNone},
    {Tn::kTimeMixRK, "time_mix_r_k", true, true, G::kNone},
    {Tn::kTimeMixKey, "time_mix_key", true, false, G::kNone},
    {Tn::kTimeMixValue, "time_mix_value", true, false, G::kNone},
    {Tn::kTimeMixReceptance, "time_mix_receptance", true, false, G::kNone},
    {Tn::kTimeMixLn, "time_mix_ln", true, true, G::kNone},
    {Tn::kTimeMixOutput, "time_mix_output", true, false, G::kNone},
    {Tn::kChannelMixLerpK, "channel_mix_lerp_k", true, true, G::kNone},
    {Tn::kChannelMixKey, "channel_mix_key", true, false, G::kNone},
    {Tn::kChannelMixValue, "channel_mix_value", true, false, G::kNone},
    {Tn::kFfnNormBare, "ffn_norm", true, true, G::kNone, true},
    {Tn::kAttnGate, "attn_gate", true, false, G::kNone},
    {Tn::kSsmBeta, "ssm_beta", true, false, G::kNone},
    {Tn::kSsmAlpha, "ssm_alpha", true, false, G::kNone},
    {Tn::kFfnGateInpShexp, "ffn_gate_inp_shexp", true, true, G::kNone},  // [n_embd]: a dot product, not a norm
    {Tn::kFfnGateShexp, "ffn_gate_shexp", true, false, G::kFfnGate},
    {Tn::kFfnUpShexp, "ffn_up_shexp", true, false, G::kFfnUp},
    {Tn::kFfnDownShexp, "ffn_down_shexp", true, false, G::kFfnDown},
    {Tn::kFfnExpProbsB, "exp_probs_b", true, true, G::kNone},  // ".bias" only
    {Tn::kAttnSinks, "attn_sinks", true, true, G::kNone},
    {Tn::kTokenTypes, "token_types", false, false, G::kNone},
    {Tn::kAttnOutNorm, "attn_output_norm", true, true, G::kNone},
    {Tn::kLayerOutNorm, "layer_output_norm", true, true, G::kNone},
    {Tn::kCls, "cls", false, false, G::kNone},
    {Tn::kClsOut, "cls.output", false, false, G::kNone},
    {Tn::kEncOutputNorm, "enc.output_norm", false, true, G::kNone},
    {Tn::kClsNorm, "cls.norm", false, true, G::kNone},
    {Tn::kEncAttnNorm, "attn_norm", true, true, G::kNone, false, "enc.blk"},
    {Tn::kEncAttnQ, "attn_q", true, false, G::kAttnQ, false, "enc.blk"},
    {Tn::kEncAttnK, "attn_k", true, false, G::kAttnK, false, "enc.blk"},
    {Tn::kEncAttnV, "attn_v", true, false, G::kAttnV, false, "enc.blk"},
    {Tn::kEncAttnOut, "attn_o", true, false, G::kNone, false, "enc.blk"},  // llama.cpp's rules miss "attn_o"
    {Tn::kEncAttnRelB, "attn_rel_b", true, false, G::kNone, false, "enc.blk"},
    {Tn::kEncFfnNorm, "ffn_norm", true, true, G::kNone, false, "enc.blk"},
    {Tn::kEncFfnGate, "ffn_gate", true, false, G::kFfnGate, false, "enc.blk"},
    {Tn::kEncFfnUp, "ffn_up", true, false, G::kFfnUp, false, "enc.blk"},
    {Tn::kEncFfnDown, "ffn_down", true, false, G::kFfnDown, false, "enc.blk"},
    {Tn::kAttnQA, "attn_q_a", true, false, G::kNone},
    {Tn::kAttnQB, "attn_q_b", true, false, G::kNone},
    {Tn::kAttnQANorm, "attn_q_a_norm", true, true, G::kNone},
    {Tn::kAttnKvAMqa, "attn_kv_a_mqa", true, false, G::kNone},
    {Tn::kAttnKvANorm, "attn_kv_a_norm", true, true, G::kNone},
    {Tn::kAttnKvB, "attn_kv_b", true, false, G::kAttnV},  // llama.cpp's quantize rules: attn_v's
    {Tn::kAttnKB, "attn_k_b", true, false, G::kNone},
    {Tn::kAttnVB, "attn_v_b", true, false, G::kNone},
    {Tn::kPerLayerTokenEmbd, "per_layer_token_embd", false, false, G::kTokenEmbd},
    {Tn::kPerLayerModelProj, "per_layer_model_proj", false, false, G::kNone},
    {Tn::kPerLayerProjNorm, "per_layer_proj_norm", false, true, G::kNone},
    {Tn::kPerLayerInpGate, "inp_gate", true, false, G::kNone},
    {Tn::kPerLayerProj, "proj", true, false, G::kNone},
    {Tn::kPerLayerPostNorm, "post_norm", true, true, G::kNone},
    {Tn::kLayerOutScale, "layer_output_scale", true, true, G::kNone},
    {Tn::kFfnPreNorm2, "pre_ffw_norm_2", true, true, G::kNone},
    {Tn::kFfnPostNorm1, "post_ffw_norm_1", true, true, G::kNone},
    {Tn::kFfnPostNorm2, "post_ffw_norm_2", true, true, G::kNone},
    {Tn::kFfnGateInpScale, "ffn_gate_inp.scale", true, true, G::kNone, true},  // [n_embd] router input scale
    {Tn::kFfnDownExpsScale, "ffn_down_exps.scale", true, true, G::kNone, true},  // [n_expert]
    {Tn::kAltupProj, "altup_proj", false, false, G::kNone},
    {Tn::kAltupUnembdProj, "altup_unembd_proj", false, false, G::kNone},
    {Tn::kAltupCorrectCoef, "altup_correct_coef", true, false, G::kNone},
    {Tn::kAltupCorrectScale, "altup_correct_scale", true, true, G::kNone},
    {Tn::kAltupPredictCoef, "altup_predict_coef", true, false, G::kNone},
    {Tn::kAltupRouter, "altup_router", true, false, G::kNone},
    {Tn::kAltupRouterNorm, "altup_router_norm", true, true, G::kNone},
    {Tn::kLaurelL, "laurel_l", true, false, G::kNone},
    {Tn::kLaurelR, "laurel_r", true, false, G::kNone},
    {Tn::kLaurelPostNorm, "laurel_post_norm", true, true, G::kNone},
    {Tn::kFfnGateUpExps, "ffn_gate_up_exps", true, false, G::kFfnGate},  // llama.cpp's quantize: ffn_gate
    // llama.cpp's quantize gives the NextN matrices no category of their own: the preset's default type
    {Tn::kNextnEhProj, "nextn.eh_proj", true, false, G::kNone},
    {Tn::kNextnEnorm, "nextn.enorm", true, true, G::kNone},
    {Tn::kNextnHnorm, "nextn.hnorm", true, true, G::kNone},
    {Tn::kNextnEmbedTokens, "nextn.embed_tokens", true, false, G::kNone},
    {Tn::kNextnSharedHeadHead, "nextn.shared_head_head", true, false, G::kNone},
    {Tn::kNextnSharedHeadNorm, "nextn.shared_head_norm", true, true, G::kNone},
};
static_assert(std::size(kTensorNames) == static_cast<size_t>(Tn::kCount));

constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kTensorNames); ++i) {
    if (static_cast<size_t>(kTensorNames[i].role) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "kTensorNames is indexed by Tn");

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

const TensorNameRow& tensor_row(Tn role) { return kTensorNames[static_cast<size_t>(role)]; }
std::span<const TensorNameRow> tensor_rows() { return kTensorNames; }

std::string tensor_name(Tn role, int layer, std::string_view suffix) {
  const TensorNameRow& r = tensor_row(role);
  std::string name = r.per_layer ? strfmt("%s.%d.%s", r.block, layer, r.base) : std::string(r.base);
  if (r.bare) return name;
  return name.append(".").append(suffix);
}

Tn encoder_role(Tn role) {
  switch (role) {
    case Tn::kAttnNorm: return Tn::kEncAttnNorm;
    case Tn::kAttnQ: return Tn::kEncAttnQ;
    case Tn::kAttnK: return Tn::kEncAttnK;
    case Tn::kAttnV: return Tn::kEncAttnV;
    case Tn::kAttnOutput: return Tn::kEncAttnOut;
    case Tn::kFfnNorm: return Tn::kEncFfnNorm;
    case Tn::kFfnGate: return Tn::kEncFfnGate;
    case Tn::kFfnUp: return Tn::kEncFfnUp;
    case Tn::kFfnDown: return Tn::kEncFfnDown;
    default: return role;
  }
}

QuantGroup quant_group_of(std::string_view name) {
  if (name == "output.weight") return G::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return G::kTokenEmbd;
  // The attention projections by their full ".weight" names (attn_q must not match attn_q_norm or
  // attn_q_a / attn_q_b); MLA's attn_kv_b counts as attn_v, as in llama.cpp.
  if (contains(name, "attn_kv_b.weight")) return G::kAttnV;
  for (Tn role : {Tn::kAttnQkv, Tn::kAttnV, Tn::kAttnK, Tn::kAttnQ, Tn::kAttnOutput}) {
    if (contains(name, std::string(tensor_row(role).base) + ".weight")) return tensor_row(role).group;
  }
  // The feed-forward ones by prefix: experts (_exps) and shared experts (_shexp) included.
  for (Tn role : {Tn::kFfnUp, Tn::kFfnGate, Tn::kFfnDown}) {
    if (contains(name, tensor_row(role).base)) return tensor_row(role).group;
  }
  return G::kNone;
}

}  // namespace ox
