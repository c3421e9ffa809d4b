// plan_tensors: the ArchSpec's switches, turned into tensor names and GGUF shapes.
#include "core/model/tensor_plan.h"

#include "core/model/arch_registry.h"
#include "core/model/moe.h"

namespace ox {
namespace {

struct Planner {
  const HParams& hp;
  std::vector<PlannedTensor>& out;

  void matrix(Tn role, int layer, int64_t cols, int64_t rows, Has has = Has::kYes) {
    if (has != Has::kNo) out.push_back({role, layer, false, has, {cols, rows}});
  }
  // Routed experts (moe.h): router, the n_expert matrices per projection, shared expert, choice bias.
  void moe(const ArchSpec& s, int l) {
    const int64_t d = hp.n_embd, ff = expert_ff(s, hp), ff_sh = shared_ff(s, hp);
    matrix(Tn::kFfnGateInp, l, d, hp.n_expert);
    if (s.experts.fused_gate_up) {
      experts(Tn::kFfnGateUpExps, l, d, 2 * ff);  // each expert's rows [gate | up]
    } else {
      if (s.experts.act != ExpertAct::kGelu) experts(Tn::kFfnGateExps, l, d, ff);  // ungated experts have none
      experts(Tn::kFfnUpExps, l, d, ff);
    }
    experts(Tn::kFfnDownExps, l, ff, d);
    if (s.experts.expert_biases) {
      bias(Tn::kFfnGateInp, l, hp.n_expert, Has::kYes);
      // One f32 row per expert: {rows' length, n_expert}.
      out.push_back({Tn::kFfnGateExps, l, true, Has::kYes, {ff, hp.n_expert}});
      out.push_back({Tn::kFfnUpExps, l, true, Has::kYes, {ff, hp.n_expert}});
      out.push_back({Tn::kFfnDownExps, l, true, Has::kYes, {d, hp.n_expert}});
    }
    bias(Tn::kFfnExpProbsB, l, hp.n_expert, s.experts.probs_bias);
    if (ff_sh > 0) {
      if (s.experts.shared_gate) vector(Tn::kFfnGateInpShexp, l, d);
      matrix(Tn::kFfnGateShexp, l, d, ff_sh);
      matrix(Tn::kFfnUpShexp, l, d, ff_sh);
      matrix(Tn::kFfnDownShexp, l, ff_sh, d);
    }
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
  void norm(const ArchSpec& s, Tn role, int layer, Has has = Has::kYes) {
    if (!s.norm_affine || has == Has::kNo) return;
    vector(role, layer, hp.n_embd, has);
    // LayerNorms' (and phimoe's RMSNorms') bias, optional with an optional norm
    bias(role, layer, hp.n_embd, has == Has::kYes || s.bias.norm == Has::kNo ? s.bias.norm : Has::kOptional);
  }
  // A q or k norm (qk_norms) of n_heads heads: one head's weights, each head's, or the row's.
  void qk_norm(const QkNorms& q, Tn role, int layer, int64_t n_heads) {
    std::vector<int64_t> dims = {hp.head_dim_k};
    if (q.shape == QkNormShape::kPerHead) dims = {hp.head_dim_k, n_heads};
    if (q.shape == QkNormShape::kRow) dims = {hp.head_dim_k * n_heads};
    out.push_back({role, layer, false, q.has, dims});
    if (q.bias != Has::kNo) out.push_back({role, layer, true, q.bias, dims});
  }
  // A projection and its bias.
  void linear(Tn role, int layer, int64_t cols, int64_t rows, Has has_bias) {
    matrix(role, layer, cols, rows);
    bias(role, layer, rows, has_bias);
  }
  // Block l's tensors: attention (or a recurrent mixer) and feed-forward, per the spec.
  void layer(const ArchSpec& s, int l) {
    const int64_t d = hp.n_embd, ff = hp.n_ff;
    const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim_k;
    const int64_t k_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
    const int64_t v_dim = int64_t{hp.n_head_kv} * hp.head_dim_v;
    // state-space layers, and every layer of qwen35 (tensor_plan_recurrent.cpp)
    if (is_recurrent_layer(s, hp, l) || s.recurrent == Recurrent::kDeltaNet) {
      plan_recurrent_layer(s, hp, l, out);
      return;
    }
    const size_t layer_first = out.size();
    if (s.pre_norms) norm(s, Tn::kAttnNorm, l, l == 0 ? s.attn_norm_layer0 : Has::kYes);
    if (s.mla) {
      mla(l);
    } else {
      plan_qkv(s, l, d, q_dim, k_dim, v_dim, s.bias.qkv, out);
    }
    const int64_t head_v = s.mla ? hp.mla_head_dim_v() : hp.head_dim_v;
    linear(Tn::kAttnOutput, l, int64_t{hp.n_head} * head_v, d, s.bias.attn_out);
    if (s.qk_norm) {
      vector(Tn::kAttnQNorm, l, hp.head_dim_k);
      vector(Tn::kAttnKNorm, l, hp.head_dim_k);
    }
    if (s.qk_norms.has != Has::kNo) {
      qk_norm(s.qk_norms, Tn::kAttnQNorm, l, hp.n_head);
      qk_norm(s.qk_norms, Tn::kAttnKNorm, l, hp.n_head_kv);
    }
    if (s.post_norms) vector(Tn::kAttnPostNorm, l, d);
    if (s.residual == Residual::kPostNorm) norm(s, Tn::kAttnOutNorm, l);
    if (s.residual == Residual::kPostNorm) norm(s, Tn::kAttnNorm2, l, s.attn_norm_2);
    if (s.ssm_beside_attention) plan_recurrent_mixer(s, hp, l, out);  // falcon-h1
    if (s.attn_sinks) vector(Tn::kAttnSinks, l, hp.n_head);

    if (s.residual != Residual::kParallel && s.pre_norms) norm(s, s.ffn_norm, l);
    if (moe_layer(s, hp, l)) {
      moe(s, l);
    } else if (s.fused_gate_up) {
      linear(Tn::kFfnUp, l, d, 2 * ff, s.bias.ffn);  // bias rows [gate | up] too (jina-bert-v2)
      linear(Tn::kFfnDown, l, ff, d, s.bias.ffn);
    } else {
      if (ffn_gated(s.ffn)) linear(Tn::kFfnGate, l, d, ff, s.bias.ffn);
      linear(Tn::kFfnUp, l, d, ff, s.bias.ffn);
      linear(Tn::kFfnDown, l, ff, d, s.bias.ffn);
    }
    if (s.post_norms) vector(Tn::kFfnPostNorm, l, d);
    if (s.residual == Residual::kPostNorm) norm(s, Tn::kLayerOutNorm, l);
    if (s.enc_tensors) {  // T5's encoder names, and its relative position bias (layer 0's is the default)
      for (size_t i = layer_first; i < out.size(); ++i) out[i].role = encoder_role(out[i].role);
    }
    if (s.rel_buckets > 0) {
      matrix(Tn::kEncAttnRelB, l, hp.n_head, s.rel_buckets, l == 0 ? Has::kYes : Has::kOptional);
    }
  }
  // deepseek2's latent attention (ArchSpec::mla), in llama.cpp's order: q through its low-rank pair
  // (or attn_q), the compressed k/v row [kv_lora_rank | n_rot], its expansion to n_head heads.
  void mla(int l) {
    const int64_t d = hp.n_embd, kv_lora = hp.n_lora_kv, q_lora = hp.n_lora_q;
    const int64_t head_k = hp.mla_head_dim_k(), head_v = hp.mla_head_dim_v(), nope = head_k - hp.n_rot;
    if (q_lora > 0) vector(Tn::kAttnQANorm, l, q_lora);
    vector(Tn::kAttnKvANorm, l, kv_lora);
    if (q_lora > 0) {
      matrix(Tn::kAttnQA, l, d, q_lora);
      matrix(Tn::kAttnQB, l, q_lora, hp.n_head * head_k);
    } else {
      matrix(Tn::kAttnQ, l, d, hp.n_head * head_k);
    }
    matrix(Tn::kAttnKvAMqa, l, d, kv_lora + hp.n_rot);
    if (hp.mla_absorbed()) {  // per head: k_b [kv_lora rows of nope], v_b [head_v rows of kv_lora]
      out.push_back({Tn::kAttnKB, l, false, Has::kYes, {nope, kv_lora, hp.n_head}});
      out.push_back({Tn::kAttnVB, l, false, Has::kYes, {kv_lora, head_v, hp.n_head}});
    } else {  // rows per head [k_nope | v]
      matrix(Tn::kAttnKvB, l, kv_lora, hp.n_head * (nope + head_v));
    }
  }
};

}  // namespace

void plan_qkv(const ArchSpec& s, int l, int64_t d, int64_t q, int64_t k, int64_t v, Has bias,
              std::vector<PlannedTensor>& out) {
  auto add = [&](Tn role, int64_t rows, Has has) {
    if (has == Has::kNo) return;
    out.push_back({role, l, false, has, {d, rows}});
  };
  auto add_bias = [&](Tn role, int64_t n, Has has) {
    if (has != Has::kNo) out.push_back({role, l, true, has, {n}});
  };
  if (s.fused_qkv) {
    add(Tn::kAttnQkv, q + k + v, Has::kYes);
    // Where the file chose the layout, its bias may be attn_qkv.bias or, in older files, attn_q/k/v.bias
    // beside the fused weight (load_decoder looks for those when attn_qkv.bias is absent).
    add_bias(Tn::kAttnQkv, q + k + v, s.qkv_either && bias != Has::kNo ? Has::kOptional : bias);
    return;
  }
  add(Tn::kAttnQ, q, Has::kYes);
  add_bias(Tn::kAttnQ, q, bias);
  add(Tn::kAttnK, k, Has::kYes);
  add_bias(Tn::kAttnK, k, bias);
  add(Tn::kAttnV, v, Has::kYes);
  add_bias(Tn::kAttnV, v, bias);
}

// An ordinary block's tensors, marked nextn, with llama.cpp's presence in a block it does not run:
// q/k/v (and a fused attn_qkv) optional, as create_tensor_qkv takes them there, except MLA's attn_q;
// the experts' gate / up where the spec says so; then the nextn.* tensors.
void plan_nextn_blocks(const ArchSpec& s, const HParams& hp, std::vector<PlannedTensor>& out) {
  Planner p{hp, out};
  const int64_t d = hp.n_embd;
  for (int l = hp.n_layer; l < hp.n_layer + hp.n_layer_nextn; ++l) {
    const size_t first = out.size();
    p.layer(s, l);
    p.matrix(Tn::kNextnEhProj, l, 2 * d, d);
    p.vector(Tn::kNextnEnorm, l, d);
    p.vector(Tn::kNextnHnorm, l, d);
    const Has own = s.nextn.own_embd_head ? Has::kOptional : Has::kNo;
    p.matrix(Tn::kNextnEmbedTokens, l, d, hp.n_vocab, own);
    p.matrix(Tn::kNextnSharedHeadHead, l, d, hp.n_vocab, own);
    p.vector(Tn::kNextnSharedHeadNorm, l, d, Has::kOptional);
    for (size_t i = first; i < out.size(); ++i) {
      PlannedTensor& t = out[i];
      t.nextn = true;
      const bool qkv = t.role == Tn::kAttnQkv || t.role == Tn::kAttnK || t.role == Tn::kAttnV ||
                       (t.role == Tn::kAttnQ && !s.mla);
      const bool gate_up = t.role == Tn::kFfnGateExps || t.role == Tn::kFfnUpExps || t.role == Tn::kFfnGateUpExps;
      if (qkv || (gate_up && s.nextn.gate_up_exps_optional)) t.presence = Has::kOptional;
    }
  }
}

void plan_moe_ffn(const ArchSpec& s, const HParams& hp, int l, std::vector<PlannedTensor>& out) {
  Planner{hp, out}.moe(s, l);
}

std::vector<PlannedTensor> plan_tensors(const ArchSpec& s, const HParams& hp) {
  std::vector<PlannedTensor> out;
  if (const ArchDef* arch = find_arch(hp.arch); arch != nullptr && arch->plan != nullptr) {
    arch->plan(s, hp, out);
    plan_nextn_blocks(s, hp, out);
    return out;
  }
  Planner p{hp, out};
  const int64_t d = hp.n_embd;

  p.matrix(Tn::kTokenEmbd, -1, d, hp.n_vocab);
  if (hp.n_token_types > 0) p.matrix(Tn::kTokenTypes, -1, d, hp.n_token_types, s.token_types);
  if (s.embd_norm) p.norm(s, Tn::kTokenEmbdNorm, -1);
  if (!s.rope) p.matrix(Tn::kPositionEmbd, -1, d, hp.n_ctx_train, s.position_embd);
  if (s.rope) p.vector(Tn::kRopeFreqs, -1, hp.n_rot / 2, s.rope_freqs);
  if (s.recurrent == Recurrent::kRwkv7) p.norm(s, Tn::kTokenEmbdNorm, -1);  // RWKV's norm of the embeddings
  for (int l = 0; l < hp.n_layer; ++l) p.layer(s, l);
  if (s.residual != Residual::kPostNorm) p.norm(s, s.output_norm, -1);  // bert's blocks end in a norm
  p.matrix(Tn::kOutput, -1, d, hp.n_vocab, s.output);
  p.bias(Tn::kOutput, -1, hp.n_vocab, s.bias.output);
  // The classification head last, so a head added to an architecture leaves the other tensors'
  // places (and synth's seeds for them) as they were.
  const int64_t cls_rows = s.cls_head.dense_to_one ? 1 : d;
  p.matrix(Tn::kCls, -1, d, cls_rows, s.cls_head.dense);
  p.bias(Tn::kCls, -1, cls_rows, s.cls_head.dense_bias);
  p.vector(Tn::kClsNorm, -1, d, s.cls_head.norm);
  p.matrix(Tn::kClsOut, -1, d, hp.n_cls_out, s.cls_head.out);
  p.bias(Tn::kClsOut, -1, hp.n_cls_out, s.cls_head.out_bias);
  plan_nextn_blocks(s, hp, out);  // last, so the trunk's tensors keep their places (and synth's seeds)
  return out;
}

}  // namespace ox
