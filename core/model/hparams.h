// HParams: a model's shape and numeric settings, read from the GGUF `<arch>.*` keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"

namespace ox {

// <arch>.rope.scaling.type: llama.cpp's names. longrope reads as linear here (its per-frequency
// factor tensors, rope_long/rope_short, are phi3's and not loaded).
enum class RopeScalingType : uint8_t { kNone, kLinear, kYarn, kLongrope };

struct HParams {
  std::string arch;           // general.architecture
  int n_vocab = 0;
  int n_ctx_train = 0;        // <arch>.context_length
  int n_embd = 0;             // <arch>.embedding_length
  int n_layer = 0;            // <arch>.block_count - n_layer_nextn: the blocks the forward pass runs
  // <arch>.nextn_predict_layers: the multi-token-prediction blocks after them (ArchSpec::nextn),
  // never run; the per-layer keys' values for them are dropped.
  int n_layer_nextn = 0;
  int n_ff = 0;               // <arch>.feed_forward_length
  int n_head = 0;             // <arch>.attention.head_count
  int n_head_kv = 0;          // <arch>.attention.head_count_kv (GQA; = n_head if absent)
  int head_dim_k = 0;         // <arch>.attention.key_length (n_embd / n_head if absent)
  int head_dim_v = 0;         // <arch>.attention.value_length
  int n_rot = 0;              // <arch>.rope.dimension_count (head_dim_k if absent)
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / <arch>.rope.scaling.factor for linear scaling
  // <arch>.rope.scaling.type (linear if absent, as llama.cpp; none forces rope_freq_scale to 1),
  // .attn_factor (multiplies rope's cos and sin), .original_context_length (YaRN's n_ctx_orig,
  // context_length if absent) and .alpha (NTK-aware alpha; the architecture decides its use).
  RopeScalingType rope_scaling = RopeScalingType::kLinear;
  float rope_attn_factor = 1.0f;
  int n_ctx_orig_yarn = 0;
  float rope_scaling_alpha = 0.0f;
  float rms_eps = 1e-5f;      // <arch>.attention.layer_norm_rms_epsilon
  float norm_eps = 1e-5f;     // <arch>.attention.layer_norm_epsilon
  int n_expert = 0;           // <arch>.expert_count (mixture of experts; 0 = dense)
  int n_expert_used = 0;      // <arch>.expert_used_count
  // Mixture-of-experts shapes (0 if absent; the spec's MoeSpec says what an absent one means):
  int n_ff_exp = 0;           // <arch>.expert_feed_forward_length
  int n_ff_shexp = 0;         // <arch>.expert_shared_feed_forward_length
  int n_expert_shared = 0;    // <arch>.expert_shared_count
  int n_layer_dense_lead = 0; // <arch>.leading_dense_block_count (used where MoeSpec::leading_dense)
  int n_expert_groups = 0;    // <arch>.expert_group_count (deepseek v3: choose groups, then experts)
  int n_group_used = 0;       // <arch>.expert_group_used_count
  int n_moe_layer_step = 0;   // <arch>.interleave_moe_layer_step: every step-th layer has experts (0, 1: all)
  int n_moe_every = 0;        // <arch>.moe_every_n_layers (nomic-bert-moe: layers l % n == 1 have experts)
  // Sliding-window attention: <arch>.attention.sliding_window (0 = none) and
  // <arch>.attention.sliding_window_pattern (0 if absent: the architecture supplies its default).
  int n_swa = 0;
  int swa_pattern = 0;
  float rope_freq_base_swa = 0.0f;  // <arch>.rope.freq_base_swa (0 if absent)
  float attn_softcap = 0.0f;        // <arch>.attn_logit_softcapping (0 = off)
  float final_softcap = 0.0f;       // <arch>.final_logit_softcapping (0 = off)
  // State-space layers (mamba, mamba2 and the hybrids): <arch>.ssm.* (0 if absent; the
  // architectures that need them check them in their configure hook).
  int ssm_d_conv = 0;   // ssm.conv_kernel
  int ssm_d_inner = 0;  // ssm.inner_size
  int ssm_d_state = 0;  // ssm.state_size
  int ssm_dt_rank = 0;  // ssm.time_step_rank (mamba2: the head count)
  int ssm_n_group = 0;  // ssm.group_count
  int shortconv_l_cache = 0;  // <arch>.shortconv.l_cache: lfm2's convolution width
  // RWKV-7 (0 if absent): wkv.head_size, the low-rank sizes of its decay / in-context learning
  // rate / value residual / gate projections (attention.*_lora_rank), token_shift_count.
  int wkv_head_size = 0;
  int n_lora_decay = 0, n_lora_iclr = 0, n_lora_value_res_mix = 0, n_lora_gate = 0;
  int token_shift_count = 0;
  int full_attention_interval = 0;  // <arch>.full_attention_interval (qwen35; 0 if absent)
  // Multi-head latent attention (deepseek2; 0 if absent): attention.q_lora_rank (0: a plain attn_q),
  // attention.kv_lora_rank, and the heads' real sizes attention.key_length_mla / value_length_mla,
  // which files with the split attn_k_b / attn_v_b have (head_dim_k / head_dim_v are then the
  // latent cache's: kv_lora_rank + n_rot and kv_lora_rank); older files with attn_kv_b have neither.
  int n_lora_q = 0, n_lora_kv = 0;
  int head_dim_k_mla = 0, head_dim_v_mla = 0;
  bool mla_absorbed() const { return head_dim_k_mla > 0 && head_dim_v_mla > 0; }
  int mla_head_dim_k() const { return mla_absorbed() ? head_dim_k_mla : head_dim_k; }
  int mla_head_dim_v() const { return mla_absorbed() ? head_dim_v_mla : head_dim_v; }
  // Hybrids (lfm2): attention.head_count_kv given per layer, 0 on the recurrent layers; n_head_kv is
  // then the largest. Empty when the key is a single count.
  std::vector<bool> kv_free_layer;
  // Counts given per layer (gemma4; empty when the key is a single count): feed_forward_length and
  // attention.head_count_kv of each layer (n_ff and n_head_kv are then the largest).
  std::vector<int> n_ff_layer;
  std::vector<int> n_head_kv_layer;
  // attention.sliding_window_pattern given per layer (true: a window layer) instead of as a period.
  std::vector<bool> swa_layers;
  // The window layers' head sizes and rotated dimensions (attention.key_length_swa,
  // attention.value_length_swa, rope.dimension_count_swa; the global layers' if absent).
  int head_dim_k_swa = 0;
  int head_dim_v_swa = 0;
  int n_rot_swa = 0;
  int n_embd_per_layer = 0;    // <arch>.embedding_length_per_layer_input: per-layer token inputs (0: none)
  int n_kv_shared_layers = 0;  // <arch>.attention.shared_kv_layers: the last layers reuse earlier layers' K/V
  // Embedding models: <arch>.pooling_type (llama_pooling_type's numbers; -1 if absent),
  // <arch>.attention.causal (true if absent), the classifier's output count (the length of
  // <arch>.classifier.output_labels, 1 if absent) and tokenizer.ggml.token_type_count (0 if absent).
  int pooling_type = -1;
  bool causal_attn = true;
  int n_cls_out = 1;
  int n_token_types = 0;
};

// Reads and validates the hyperparameters (counts positive, heads divide evenly, ...).
// Errors name the file and the key.
Result<HParams> read_hparams(const gguf::GgufFile& file);

}  // namespace ox
