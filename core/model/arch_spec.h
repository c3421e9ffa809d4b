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

// Feed-forward: silu(x Wgate) * (x Wup), gelu(x Wgate) * (x Wup), or ungated gelu(x Wup).
enum class FfnKind : uint8_t { kSwiGlu, kGeGlu, kGelu };

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

// Mixture of experts (moe.cpp), as llama.cpp's build_moe_ffn is parameterised.
// How router logits become the scores experts are chosen by and weighted with:
//   kSoftmax: p = softmax(logits); kSigmoid: p = sigmoid(logits);
//   kSoftmaxAfterTopK: chosen by the logits, weighted by the softmax of the chosen logits.
enum class MoeGating : uint8_t { kSoftmax, kSigmoid, kSoftmaxAfterTopK };
// An expert's activation: silu(g) * u, gelu(g) * u, or gpt-oss's clamped SwiGLU ("swiglu_oai").
enum class ExpertAct : uint8_t { kSwiGlu, kGeGlu, kSwiGluOai };
// The expert feed-forward width when <arch>.expert_feed_forward_length is absent.
// kNffAlways: feed_forward_length whatever the key says (hunyuan-moe, as llama.cpp loads it).
enum class ExpertFf : uint8_t { kNff, kNffOverUsed, kRequired, kNffAlways };
// Shared experts (ffn_{gate,up,down}_shexp), run on every token and added to the routed output:
//   kShexpOrNff: always, expert_shared_feed_forward_length wide (n_ff if absent: qwen2moe);
//   kIfShexpKey: only when expert_shared_feed_forward_length > 0 (granitemoe);
//   kExpTimesCount: n_ff_exp * expert_shared_count wide, when the count > 0 (deepseek2 family).
//   kExpertFf: always, as wide as a routed expert (llama4).
enum class SharedFf : uint8_t { kNone, kShexpOrNff, kIfShexpKey, kExpTimesCount, kExpertFf };

struct MoeSpec {
  MoeGating gating = MoeGating::kSoftmax;
  bool norm_w = true;           // the chosen weights divided by their sum (mixtral); configure may reset it
  float weights_scale = 0.0f;   // chosen weights * this (0 or 1: none); configure reads expert_weights_scale
  ExpertAct act = ExpertAct::kSwiGlu;
  ExpertFf ff = ExpertFf::kNff;
  SharedFf shared = SharedFf::kNone;
  bool shared_gate = false;     // qwen2moe: shared expert * sigmoid(h . ffn_gate_inp_shexp)
  Has probs_bias = Has::kNo;    // exp_probs_b: added to the scores for choosing only (deepseek v3)
  bool expert_biases = false;   // ffn_gate_inp.bias, ffn_{gate,up,down}_exps.bias [n_expert rows] (gpt-oss)
  bool leading_dense = false;   // the first leading_dense_block_count layers are dense (deepseek2)
  // llama4: experts chosen by the raw logits; the chosen (sigmoid) weight scales the expert's
  // input instead of its output.
  bool weight_input = false;
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
  bool qk_norm_after_rope = false;  // qk_norm applied after rotation instead of before (hunyuan-moe)
  bool post_norms = false;          // post_attention_norm / post_ffw_norm on sub-block outputs (gemma2/3)
  bool attn_sinks = false;          // attn_sinks [n_head]: a logit per head in the softmax's denominator (gpt-oss)
  bool moe = false;                 // experts when <arch>.expert_count > 0 (ffn_gate_inp + ffn_*_exps)
  MoeSpec experts;                  // how the experts route and compute (defaults: mixtral's)

  bool embd_scale = false;          // x = token_embd[t] * sqrt(n_embd) (gemma family)
  // Granite's multipliers (its configure hook reads them from the file; 0: off):
  float embd_mult = 0.0f;           // x = token_embd[t] * embd_mult (<arch>.embedding_scale)
  float residual_scale = 0.0f;      // attention and feed-forward outputs * this before each residual add
  float logit_divisor = 0.0f;       // logits / this (<arch>.logit_scale)
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
  // llama4: window layers attend within their chunk of attn_chunk positions (which replaces the
  // file's window); layers with (l + 1) % nope_step == 0 have no rotary positions and, with
  // attn_temp, scale q by llama.cpp's temperature log(floor((pos + 1) / 8192) + 1) * 0.1 + 1.
  int attn_chunk = 0;
  int nope_step = 0;
  bool attn_temp = false;
  bool qk_unit_norm = false;        // llama4: q and k heads RMS-normalised (no weight) after rotation, where rotated
};

}  // namespace ox
