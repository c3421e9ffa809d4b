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
    {Tn::kFfnGateInpShexp, "ffn_gate_inp_shexp", true, true, G::kNone},  // [n_embd]: a dot product, not a norm
    {Tn::kFfnGateShexp, "ffn_gate_shexp", true, false, G::kFfnGate},
    {Tn::kFfnUpShexp, "ffn_up_shexp", true, false, G::kFfnUp},
    {Tn::kFfnDownShexp, "ffn_down_shexp", true, false, G::kFfnDown},
    {Tn::kFfnExpProbsB, "exp_probs_b", true, true, G::kNone},  // ".bias" only
    {Tn::kAttnSinks, "attn_sinks", true, true, G::kNone},
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
  std::string name = r.per_layer ? strfmt("blk.%d.%s.", layer, r.base) : std::string(r.base) + ".";
  return name.append(suffix);
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
