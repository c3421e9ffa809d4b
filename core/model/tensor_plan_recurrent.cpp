// The tensors of recurrent (state-space) layers, with llama.cpp's shapes (src/models/mamba.cpp,
// mamba2.cpp, lfm2.cpp): the plan of one layer for each Recurrent mixer.
#include "core/model/tensor_plan.h"

#include "core/model/moe.h"

namespace ox {

void plan_qwen35_layer(const ArchSpec& s, const HParams& hp, int l, std::vector<PlannedTensor>& out);

namespace {

// RWKV-7 (llama.cpp's src/models/rwkv7.cpp): LayerNorms with biases before each mix.
void plan_rwkv7_layer(const HParams& hp, int l, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd;
  auto add = [&](Tn role, std::vector<int64_t> dims, bool bias = false) {
    out.push_back({role, l, bias, Has::kYes, std::move(dims)});
  };
  add(Tn::kAttnNorm, {d});
  add(Tn::kAttnNorm, {d}, true);
  add(Tn::kAttnNorm2, {d});
  add(Tn::kAttnNorm2, {d}, true);
  add(Tn::kTimeMixW0, {d});
  add(Tn::kTimeMixW1, {d, hp.n_lora_decay});
  add(Tn::kTimeMixW2, {hp.n_lora_decay, d});
  add(Tn::kTimeMixA0, {d});
  add(Tn::kTimeMixA1, {d, hp.n_lora_iclr});
  add(Tn::kTimeMixA2, {hp.n_lora_iclr, d});
  // Layer 0's value-residual maps are present but unused, sized by the iclr rank.
  const int64_t v_rank = l == 0 ? hp.n_lora_iclr : hp.n_lora_value_res_mix;
  add(Tn::kTimeMixV0, {d});
  add(Tn::kTimeMixV1, {d, v_rank});
  add(Tn::kTimeMixV2, {v_rank, d});
  add(Tn::kTimeMixG1, {d, hp.n_lora_gate});
  add(Tn::kTimeMixG2, {hp.n_lora_gate, d});
  add(Tn::kTimeMixLerpFused, {d, 1, 1, 6});
  add(Tn::kTimeMixKK, {d});
  add(Tn::kTimeMixKA, {d});
  add(Tn::kTimeMixRK, {d});
  add(Tn::kTimeMixKey, {d, d});
  add(Tn::kTimeMixValue, {d, d});
  add(Tn::kTimeMixReceptance, {d, d});
  add(Tn::kTimeMixLn, {d});
  add(Tn::kTimeMixLn, {d}, true);
  add(Tn::kTimeMixOutput, {d, d});
  add(Tn::kChannelMixLerpK, {d});
  add(Tn::kChannelMixKey, {d, hp.n_ff});
  add(Tn::kChannelMixValue, {hp.n_ff, d});
}

}  // namespace

// qwen35 (llama.cpp's src/models/qwen35.cpp, qwen35moe.cpp): both kinds of layer end in
// post_attention_norm (the feed-forward's norm) and a SwiGLU feed-forward, or qwen35moe's experts. Attention layers project q together with its
// output gate (per head [q | gate]).
void plan_qwen35_layer(const ArchSpec& s, const HParams& hp, int l, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd;
  auto add = [&](Tn role, std::vector<int64_t> dims, bool bias = false, Has has = Has::kYes) {
    out.push_back({role, l, bias, has, std::move(dims)});
  };
  add(Tn::kAttnNorm, {d});
  add(Tn::kAttnPostNorm, {d});
  if (is_recurrent_layer(s, hp, l)) {
    const int64_t key_dim = int64_t{hp.ssm_d_state} * hp.ssm_n_group, value_dim = hp.ssm_d_inner;
    const int64_t n_v_head = hp.ssm_dt_rank;
    add(Tn::kAttnQkv, {d, 2 * key_dim + value_dim});
    add(Tn::kAttnGate, {d, value_dim});
    add(Tn::kSsmConv1d, {hp.ssm_d_conv, 2 * key_dim + value_dim});
    add(Tn::kSsmDt, {n_v_head}, true);
    add(Tn::kSsmA, {n_v_head});
    add(Tn::kSsmBeta, {d, n_v_head});
    add(Tn::kSsmAlpha, {d, n_v_head});
    add(Tn::kSsmNorm, {value_dim / n_v_head});
    add(Tn::kSsmOut, {value_dim, d});
  } else {
    const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim_k, kv_dim = int64_t{hp.n_head_kv} * hp.head_dim_k;
    plan_qkv(s, l, d, 2 * q_dim, kv_dim, kv_dim, Has::kOptional, out);  // q rows per head [q | gate]
    add(Tn::kAttnOutput, {q_dim, d});
    add(Tn::kAttnQNorm, {hp.head_dim_k});
    add(Tn::kAttnKNorm, {hp.head_dim_k});
  }
  if (moe_layer(s, hp, l)) {  // qwen35moe: routed experts and a sigmoid-gated shared expert
    plan_moe_ffn(s, hp, l, out);
    return;
  }
  add(Tn::kFfnGate, {d, hp.n_ff});
  add(Tn::kFfnUp, {d, hp.n_ff});
  add(Tn::kFfnDown, {hp.n_ff, d});
}

bool is_recurrent_layer(const ArchSpec& s, const HParams& hp, int l) {
  if (s.recurrent == Recurrent::kNone) return false;
  if (l >= hp.n_layer) return false;  // multi-token-prediction blocks attend (llama.cpp's qwen35)
  if (!s.hybrid) return true;
  const int interval = hp.full_attention_interval > 0 ? hp.full_attention_interval : s.attention_interval;
  if (hp.kv_free_layer.empty() && interval > 0) return (l + 1) % interval != 0;
  return static_cast<size_t>(l) < hp.kv_free_layer.size() && hp.kv_free_layer[static_cast<size_t>(l)];
}

void plan_recurrent_layer(const ArchSpec& s, const HParams& hp, int l, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd;
  auto add = [&](Tn role, std::vector<int64_t> dims, bool bias = false, Has has = Has::kYes) {
    out.push_back({role, l, bias, has, std::move(dims)});
  };
  if (s.recurrent == Recurrent::kRwkv7) {
    plan_rwkv7_layer(hp, l, out);
    return;
  }
  if (s.recurrent == Recurrent::kDeltaNet) {
    plan_qwen35_layer(s, hp, l, out);
    return;
  }
  add(Tn::kAttnNorm, {d});
  plan_recurrent_mixer(s, hp, l, out);
  if (!s.hybrid) return;
  // A hybrid's recurrent layers end in the same SwiGLU feed-forward as its attention layers.
  add(s.ffn_norm, {d});
  for (Tn role : {Tn::kFfnGate, Tn::kFfnUp}) {
    add(role, {d, hp.n_ff});
    if (s.bias.ffn != Has::kNo) add(role, {hp.n_ff}, true, s.bias.ffn);
  }
  add(Tn::kFfnDown, {hp.n_ff, d});
  if (s.bias.ffn != Has::kNo) add(Tn::kFfnDown, {d}, true, s.bias.ffn);
}

void plan_recurrent_mixer(const ArchSpec& s, const HParams& hp, int l, std::vector<PlannedTensor>& out) {
  const int64_t d = hp.n_embd, d_inner = hp.ssm_d_inner, d_state = hp.ssm_d_state, d_conv = hp.ssm_d_conv;
  const int64_t dt_rank = hp.ssm_dt_rank, n_group = hp.ssm_n_group;
  auto add = [&](Tn role, std::vector<int64_t> dims, bool bias = false, Has has = Has::kYes) {
    out.push_back({role, l, bias, has, std::move(dims)});
  };
  switch (s.recurrent) {
    case Recurrent::kNone:
      break;
    case Recurrent::kMamba:
      add(Tn::kSsmIn, {d, 2 * d_inner});
      add(Tn::kSsmConv1d, {d_conv, d_inner});
      add(Tn::kSsmConv1d, {d_inner}, true);
      add(Tn::kSsmX, {d_inner, dt_rank + 2 * d_state});
      add(Tn::kSsmDt, {dt_rank, d_inner});
      add(Tn::kSsmDt, {d_inner}, true);
      add(Tn::kSsmA, {d_state, d_inner});
      add(Tn::kSsmD, {d_inner});
      add(Tn::kSsmOut, {d_inner, d});
      break;
    case Recurrent::kMamba2: {
      // ssm_in rows: [z (d_inner) | x B C (conv_dim) | dt (n_head = dt_rank)]
      const int64_t conv_dim = d_inner + 2 * n_group * d_state;
      add(Tn::kSsmIn, {d, d_inner + conv_dim + dt_rank});
      add(Tn::kSsmConv1d, {d_conv, conv_dim});
      add(Tn::kSsmConv1d, {conv_dim}, true, s.ssm_conv_bias);
      add(Tn::kSsmDt, {dt_rank}, true);
      add(Tn::kSsmA, {1, dt_rank});
      add(Tn::kSsmD, {1, dt_rank});
      add(Tn::kSsmNorm, {n_group > 0 ? d_inner / n_group : d_inner, n_group}, false, s.ssm_norm);
      add(Tn::kSsmOut, {d_inner, d});
      break;
    }
    case Recurrent::kRwkv7:
    case Recurrent::kDeltaNet:  // whole layers: plan_rwkv7_layer, plan_qwen35_layer
      break;
    case Recurrent::kShortConv:  // lfm2: gates and input, the convolution, the output
      add(Tn::kShortConvConv, {hp.shortconv_l_cache, d});
      add(Tn::kShortConvInProj, {d, 3 * d});
      add(Tn::kShortConvOutProj, {d, d});
      break;
  }
}

}  // namespace ox
