// HParams: a model's shape and numeric settings, read from the GGUF `<arch>.*` keys.
#pragma once

#include <cstdint>
#include <string>

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
  int n_layer = 0;            // <arch>.block_count
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
  // Sliding-window attention: <arch>.attention.sliding_window (0 = none) and
  // <arch>.attention.sliding_window_pattern (0 if absent: the architecture supplies its default).
  int n_swa = 0;
  int swa_pattern = 0;
  float rope_freq_base_swa = 0.0f;  // <arch>.rope.freq_base_swa (0 if absent)
  float attn_softcap = 0.0f;        // <arch>.attn_logit_softcapping (0 = off)
  float final_softcap = 0.0f;       // <arch>.final_logit_softcapping (0 = off)
};

// Reads and validates the hyperparameters (counts positive, heads divide evenly, ...).
// Errors name the file and the key.
Result<HParams> read_hparams(const gguf::GgufFile& file);

}  // namespace ox
