// ArchSpec: what sets one transformer architecture apart from another, as data. Each file in
// core/model/archs/ writes one with designated initialisers; the tensor plan (tensor_plan.h), the
// loader, `oxidize synth` and the generic forward pass (decoder.cpp) all read it. Fields default to
// llama's choices, so a spec names only what differs.
#pragma once

#include <cstdint>

#include "core/model/tensor_names.h"
#include "core/ops/ops.h"

namespace ox {

enum class NormKind : uint8_t { kRms, kLayer };  // RMSNorm (weight) / LayerNorm (weight, bias per Biases::norm)

// Feed-forward: silu(x Wgate) * (x Wup), gelu(x Wgate) * (x Wup), or ungated gelu(x Wup);
// kReluSqr: ungated relu(x Wup)^2 (arcee); kXielu: ungated xielu(x Wup) with per-layer
// parameters (apertus, LayerWeights::xielu).
enum class FfnKind : uint8_t { kSwiGlu, kGeGlu, kGelu, kReluSqr, kXielu };
// Whether the feed-forward has a gate projection (ffn_gate).
constexpr bool ffn_gated(FfnKind k) { return k == FfnKind::kSwiGlu || k == FfnKind::kGeGlu; }

// How a block combines attention and feed-forward with the residual stream x:
//   kSequential:        x += attn(norm1(x)); x += ffn(norm2(x))
//   kParallel:          x += attn(norm1(x)) + ffn(norm1(x))      (one norm: phi2, falcon-7B)
//   kParallelTwoNorms:  x += attn(norm1(x)) + ffn(norm2(x))      (gpt-neox, falcon-40B)
enum class Residual : uint8_t { kSequential, kParallel, kParallelTwoNorms };

// Whether a tensor is in the architecture: never, optional (llama.cpp's TENSOR_NOT_REQUIRED: the
// loader takes it when the file has it, synth always writes it), or required.
enum class Has : uint8_t { kNo, kOptional, kYes };

struct Biases {
  Has qkv = Has::kNo;       // attn_q/k/v.bias, or attn_qkv.bias
  Has attn_out = Has::kNo;  // attn_output.bias
  Has ffn = Has::kNo;       // ffn_gate/up/down.bias
  Has norm = Has::kNo;      // LayerNorm biases (attn_norm, ffn_norm, output_norm)
  Has output = Has::kNo;    // output.bias
};

struct ArchSpec {
  NormKind norm = NormKind::kRms;
  bool rope = true;  // false: learned absolute positions (position_embd) instead
  RopeStyle rope_style = RopeStyle::kNorm;
  FfnKind ffn = FfnKind::kSwiGlu;
  Residual residual = Residual::kSequential;
  Tn ffn_norm = Tn::kFfnNorm;  // the feed-forward's norm under kParallelTwoNorms (falcon-40B: attn_norm_2)
  Biases bias;
  Has output = Has::kOptional;      // output.weight; absent: tied to token_embd
  Has rope_freqs = Has::kNo;        // rope_freqs.weight: llama3's per-frequency divisors
  bool fused_qkv = false;           // attn_qkv: rows [q | k | v]
  bool fused_gate_up = false;       // ffn_up: rows [gate | up] (phi3)
  bool qk_norm = false;             // attn_q_norm / attn_k_norm: RMSNorm of every head (qwen3, gemma3)
  bool post_norms = false;          // post_attention_norm / post_ffw_norm on sub-block outputs (gemma2/3)
  bool moe = false;                 // experts when <arch>.expert_count > 0 (ffn_gate_inp + ffn_*_exps)

  bool embd_scale = false;          // x = token_embd[t] * sqrt(n_embd) (gemma family)
  float attn_scale = 0.0f;          // multiplier of q.k; 0: 1/sqrt(head_dim_k)
  // llama.cpp multiplies q by the scale before attention for some architectures: the same maths,
  // but q is rounded to the cache's type after scaling under Numerics::kLlamaCpp.
  bool scale_q_first = false;
  bool softcaps = false;            // reads attn_logit_softcapping / final_logit_softcapping (gemma2)
  float attn_softcap = 0.0f;        // > 0: score = c * tanh(score / c) (set from the file when softcaps)
  float final_softcap = 0.0f;       // > 0: logit = c * tanh(logit / c)

  // Sliding-window attention: when the file has <arch>.attention.sliding_window, layers with
  // l % swa_pattern < swa_pattern - 1 see only the window (0: the window is ignored, as llama.cpp does
  // for llama and phi3). The file's attention.sliding_window_pattern overrides the pattern.
  int swa_pattern = 0;
  float rope_base_swa = 0.0f;       // rope base of window layers without rope.freq_base_swa (0: global)
  float rope_scale_swa = 0.0f;      // rope scaling of window layers (0: the global layers')

  // YaRN (rope.scaling.type yarn, core/model/rope_scaling.h): llama_hparams' defaults, which some
  // architectures' configure overrides from rope.scaling.yarn_beta_fast / yarn_beta_slow /
  // yarn_log_multiplier (mistral3). A log multiplier != 0 divides YaRN's magnitude as HF's mscale_all_dim.
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  float yarn_log_mul = 0.0f;
  // Llama 4 attention temperature (attention.temperature_scale, read by configure; 0: off): q at
  // position p is multiplied by 1 + t * ln(floor(p / rope.scaling.original_context_length) + 1).
  float attn_temp_scale = 0.0f;

  // Granite / MiniCPM multipliers (set by configure from the file; 0: off): token embeddings times
  // embd_mult, each sub-block's output times residual_mult before its residual add, logits times
  // logit_mult.
  float embd_mult = 0.0f;
  float residual_mult = 0.0f;
  float logit_mult = 0.0f;
  // NoPE layers: layer l does not rotate q and k when (l + 1) % no_rope_layer_step == 0 (smollm3: 4;
  // 1: no layer rotates). 0: every layer rotates.
  int no_rope_layer_step = 0;
  // exaone4: no attn_norm / ffn_norm before the sub-blocks (post_norms only); with a sliding
  // window, only the window layers rotate (the global ones are NoPE); the window when the file has
  // no attention.sliding_window (0: none).
  bool pre_norms = true;
  bool rope_swa_only = false;
  int n_swa_default = 0;
  // ALiBi's maximum bias (baichuan 13B: 8, set by configure; 0: none): attention adds a per-head
  // linear distance penalty (AttentionParams::alibi_max_bias).
  float alibi_max_bias = 0.0f;
  // hunyuan-dense: q/k head norms after rotation instead of before; and the NTK-aware base
  // base * alpha^(d / (d - 2)) (d: the head size) for a file's rope.scaling.alpha.
  bool qk_norm_after_rope = false;
  bool rope_alpha_base = false;
};

}  // namespace ox
