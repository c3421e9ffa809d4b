// plan_tensors: the ArchSpec's switches, turned into tensor names and GGUF shapes.
#include "core/model/tensor_plan.h"

namespace ox {
namespace {

struct Planner {
  const HParams& hp;
  std::vector<PlannedTensor>& out;

  void matrix(Tn role, int layer, int64_t cols, int64_t rows, Has has = Has::kYes) {
    if (has != Has::kNo) out.push_back({role, layer, false, has, {cols, rows}});
  }
  void experts(Tn role, int layer, int64_t cols, int64_t rows) {
    out.push_back({role, layer, false, Has::kYes, {cols, rows, hp.n_expert}});
  }
  void vector(Tn role, int layer, int64_t n, Has has = Has::kYes) {
    if (has != Has::kNo) out.push_back({role, layer, false, has, {n}});
  }
  void bias(Tn role, int layer, int64_t n, Has has) {
    if (has != Has::kNo) out.push_back({role, layer, true, has, {n}});
  }
  // A norm's weight, and its bias where the spec's LayerNorms have one.
  void norm(const ArchSpec& s, Tn role, int layer) {
    vector(role, layer, hp.n_embd);
    if (s.norm == NormKind::kLayer) bias(role, layer, hp.n_embd, s.bias.norm);
  }
  // A projection and its bias.
  void linear(Tn role, int layer, int64_t cols, int64_t rows, Has has_bias) {
    matrix(role, layer, cols, rows);
    bias(role, layer, rows, has_bias);
  }
};

}  // namespace

std::vector<PlannedTensor> plan_tensors(const ArchSpec& s, const HParams& hp) {
  std::vector<PlannedTensor> out;
  Planner p{hp, out};
  const int64_t d = hp.n_embd, ff = hp.n_ff;
  const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim_k;
  const int64_t k_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
  const int64_t v_dim = int64_t{hp.n_head_kv} * hp.head_dim_v;

  p.matrix(Tn::kTokenEmbd, -1, d, hp.n_vocab);
  if (!s.rope) p.matrix(Tn::kPositionEmbd, -1, d, hp.n_ctx_train);
  if (s.rope) p.vector(Tn::kRopeFreqs, -1, hp.n_rot / 2, s.rope_freqs);
  for (int l = 0; l < hp.n_layer; ++l) {
    if (s.pre_norms) p.norm(s, Tn::kAttnNorm, l);
    if (s.fused_qkv) {
      p.linear(Tn::kAttnQkv, l, d, q_dim + k_dim + v_dim, s.bias.qkv);
    } else {
      p.linear(Tn::kAttnQ, l, d, q_dim, s.bias.qkv);
      p.linear(Tn::kAttnK, l, d, k_dim, s.bias.qkv);
      p.linear(Tn::kAttnV, l, d, v_dim, s.bias.qkv);
    }
    p.linear(Tn::kAttnOutput, l, int64_t{hp.n_head} * hp.head_dim_v, d, s.bias.attn_out);
    if (s.qk_norm) {
      p.vector(Tn::kAttnQNorm, l, hp.head_dim_k);
      p.vector(Tn::kAttnKNorm, l, hp.head_dim_k);
    }
    if (s.post_norms) p.vector(Tn::kAttnPostNorm, l, d);

    if (s.residual != Residual::kParallel && s.pre_norms) p.norm(s, s.ffn_norm, l);
    if (s.moe && hp.n_expert > 0) {
      p.matrix(Tn::kFfnGateInp, l, d, hp.n_expert);
      p.experts(Tn::kFfnGateExps, l, d, ff);
      p.experts(Tn::kFfnUpExps, l, d, ff);
      p.experts(Tn::kFfnDownExps, l, ff, d);
    } else if (s.fused_gate_up) {
      p.linear(Tn::kFfnUp, l, d, 2 * ff, Has::kNo);
      p.linear(Tn::kFfnDown, l, ff, d, s.bias.ffn);
    } else {
      if (ffn_gated(s.ffn)) p.linear(Tn::kFfnGate, l, d, ff, s.bias.ffn);
      p.linear(Tn::kFfnUp, l, d, ff, s.bias.ffn);
      p.linear(Tn::kFfnDown, l, ff, d, s.bias.ffn);
    }
    if (s.post_norms) p.vector(Tn::kFfnPostNorm, l, d);
  }
  p.norm(s, Tn::kOutputNorm, -1);
  p.matrix(Tn::kOutput, -1, d, hp.n_vocab, s.output);
  p.bias(Tn::kOutput, -1, hp.n_vocab, s.bias.output);
  return out;
}

}  // namespace ox
