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
// parameters (apertus, LayerWeights::xielu); kRelu: ungated relu(x Wup) (the original T5).
enum class FfnKind : uint8_t { kSwiGlu, kGeGlu, kGelu, kReluSqr, kXielu, kRelu };
// Whether the feed-forward has a gate projection (ffn_gate).
constexpr bool ffn_gated(FfnKind k) { return k == FfnKind::kSwiGlu || k == FfnKind::kGeGlu; }

// How a block combines attention and feed-forward with the residual stream x:
//   kSequential:        x += attn(norm1(x)); x += ffn(norm2(x))
//   kParallel:          x += attn(norm1(x)) + ffn(norm1(x))      (one norm: phi2, falcon-7B)
//   kParallelTwoNorms:  x += attn(norm1(x)) + ffn(norm2(x))      (gpt-neox, falcon-40B)
//   kPostNorm:          x = norm1(x + attn(x)); x = norm2(x + ffn(x))  (bert: attn_output_norm,
//                       layer_output_norm; no pre-norms, no output_norm)
enum class Residual : uint8_t { kSequential, kParallel, kParallelTwoNorms, kPostNorm };

// The sequence mixer of recurrent layers, which keep a fixed-size state per sequence
// (recurrent_state.h) instead of K/V rows: kNone for transformers. Such layers run in the
// architecture's own forward function (forward_<mixer>.cpp).
//   kMamba:  Mamba's selective scan (ssm_in, ssm_conv1d, ssm_x, ssm_dt, ssm_a, ssm_d, ssm_out)
//   kMamba2: Mamba-2's SSD with groups and a grouped RMSNorm (ssm_norm)
//   kShortConv: lfm2's gated short convolution (shortconv.in_proj / conv / out_proj)
//   kRwkv7: RWKV-7's time mix (wkv7 state) and channel mix, each with a token shift
//   kDeltaNet: Qwen3.5's gated delta net (attn_qkv, attn_gate, ssm_conv1d, ssm_alpha/beta, ssm_a, ssm_norm)
enum class Recurrent : uint8_t { kNone, kMamba, kMamba2, kShortConv, kRwkv7, kDeltaNet };

// Whether a tensor is in the architecture: never, optional (llama.cpp's TENSOR_NOT_REQUIRED: the
// loader takes it when the file has it, synth always writes it), or required.
enum class Has : uint8_t { kNo, kOptional, kYes };

// q/k norms other than qk_norm's (an RMSNorm of every head with one [head_dim] weight): over each
// head with one weight for all heads (kShared), each head with its own ({head_dim, n_head}:
// stablelm, command-r), or over the whole q / k row (olmo2).
enum class QkNormShape : uint8_t { kShared, kPerHead, kRow };
struct QkNorms {
  Has has = Has::kNo;
  NormKind kind = NormKind::kRms;
  QkNormShape shape = QkNormShape::kShared;
  Has bias = Has::kNo;  // LayerNorm biases attn_q_norm.bias / attn_k_norm.bias (jina-bert-v2)
};

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
// An expert's activation: silu(g) * u, gelu(g) * u, gpt-oss's clamped SwiGLU ("swiglu_oai"), or
// ungated gelu(u) (experts without ffn_gate_exps: nomic-bert-moe).
enum class ExpertAct : uint8_t { kSwiGlu, kGeGlu, kSwiGluOai, kGelu };
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
  // nomic-bert-moe: layer l has experts when the file's moe_every_n_layers n is > 0 and
  // l % n == 1, as llama.cpp tests it (HParams::n_moe_every; absent: no layer has).
  bool every_n_layers = false;
  // Each expert's gate and up projections as one tensor, ffn_gate_up_exps (rows [gate | up]):
  // gemma4's converted files (its configure hook reads the layout off the file), or where
  // gate_up_either lets the file choose.
  bool fused_gate_up = false;
  // The file may hold either expert layout (llama.cpp's create_tensor_gate_up_exps:
  // ffn_gate_up_exps where the file has it, else ffn_gate_exps + ffn_up_exps; convert_hf_to_gguf.py
  // --fuse-gate-up-exps): Model::load reads it off the file once and sets fused_gate_up.
  bool gate_up_either = false;
};

// The classification head of rerankers, which rank pooling runs on one token of each sequence
// (llama.cpp's build_pooling): tanh(cls x + cls.bias) (modern-bert: norm(gelu(cls x))), then
// cls.output x (+ cls.output.bias), each where the file has it (as llama.cpp's optional tensors),
// then a softmax where the spec says.
struct ClsHead {
  Has dense = Has::kNo;       // cls.weight [n_embd, dense rows]
  Has dense_bias = Has::kNo;  // cls.bias
  bool dense_to_one = false;  // cls has one row instead of n_embd (jina-bert-v2's reranker)
  // modern-bert: the mean of the sequence's tokens instead of one token, GELU after cls instead of
  // tanh, then a LayerNorm (cls.norm, no bias).
  bool mean = false;
  bool gelu = false;
  Has norm = Has::kNo;
  Has out = Has::kNo;       // cls.output.weight [n_embd, n_cls_out]
  Has out_bias = Has::kNo;  // cls.output.bias
  // The sequence's last token, not its first (Qwen3-Reranker: llama.cpp's rank pooling on qwen3).
  bool last_token = false;
  // A softmax over the outputs (Qwen3-Reranker: its two labels "yes", "no"; the score is p(yes)).
  bool softmax = false;
  bool any() const { return dense != Has::kNo || out != Has::kNo; }
};

// Multi-token-prediction (NextN) blocks: the last <arch>.nextn_predict_layers of block_count, each
// an ordinary block plus its nextn.* tensors, which llama.cpp loads only to draft tokens
// speculatively and skips in the forward pass. Where an architecture opts in, oxidize checks their
// tensors as llama.cpp's loader does (names, shapes, required or not), never loads them, and runs
// the trunk (HParams::n_layer). Elsewhere a file with such blocks is refused.
struct NextnSpec {
  bool on = false;
  // The file may leave the blocks out altogether (a "trunk only" GGUF: no blk.<n_layer>.nextn.eh_proj),
  // every one of their tensors then optional (llama.cpp's glm4-moe.cpp, deepseek2.cpp).
  bool trunk_only = false;
  // The blocks' expert gate / up projections are optional (llama.cpp loads them through
  // create_tensor_gate_up_exps, which skips them unchecked in blocks it does not run: deepseek2, qwen35moe).
  bool gate_up_exps_optional = false;
  // The blocks may have an embedding and a head of their own (optional nextn.embed_tokens,
  // shared_head_head); exaone4's loader takes neither, and a file with them is refused there.
  bool own_embd_head = true;
};

struct ArchSpec {
  NormKind norm = NormKind::kRms;
  bool norm_affine = true;  // false: every norm without weight or bias (olmo's LayerNorm)
  bool pre_norms = true;    // false: no attn_norm / ffn_norm, only the post norms (olmo2)
  bool rope = true;  // false: learned absolute positions (position_embd) instead
  // position_embd without rope: required (gpt2), optional (mpt) or absent (bloom: ALiBi only).
  Has position_embd = Has::kYes;
  // > 0: ALiBi, score += slope(head) * (key position - query position), slopes from this maximum
  // bias as ggml computes them (core/ops/alibi.h). bloom: 8; mpt, jais: attention.max_alibi_bias.
  float alibi_max_bias = 0.0f;
  RopeStyle rope_style = RopeStyle::kNorm;
  FfnKind ffn = FfnKind::kSwiGlu;
  Residual residual = Residual::kSequential;
  Tn ffn_norm = Tn::kFfnNorm;  // the feed-forward's norm under kParallelTwoNorms (falcon-40B: attn_norm_2)
  Biases bias;
  Has output = Has::kOptional;      // output.weight; absent: tied to token_embd
  Has rope_freqs = Has::kNo;        // rope_freqs.weight: llama3's per-frequency divisors
  bool rope_freqs_global_only = false;  // rope_freqs on the global layers only, not the window layers (gemma4)
  // The last attention.shared_kv_layers layers attend over earlier layers' K/V and store none
  // (gemma4: its forward function); other architectures ignore the key, as llama.cpp.
  bool shared_kv = false;
  // > 0: the layers from this one on reuse K/V whatever the file says (gemma3n: 20, as llama.cpp).
  int shared_kv_from = 0;
  bool fused_qkv = false;           // attn_qkv: rows [q | k | v]
  // The file may hold the other q/k/v layout (llama.cpp's create_tensor_qkv: attn_qkv where the
  // file has it, else attn_q/k/v; convert_hf_to_gguf.py --fuse-qkv): Model::load reads the
  // layout off the file once and sets fused_qkv (file_layout.h). false: fused_qkv is the only one.
  bool qkv_either = true;
  bool fused_gate_up = false;       // ffn_up: rows [gate | up] (phi3)
  bool qk_norm = false;             // attn_q_norm / attn_k_norm: RMSNorm of every head (qwen3, gemma3)
  QkNorms qk_norms;                 // the other q/k norms (olmo2, stablelm, command-r)
  bool qk_norm_after_rope = false;  // qk_norm applied after rotation instead of before (hunyuan-moe)
  bool post_norms = false;          // post_attention_norm / post_ffw_norm on sub-block outputs (gemma2/3)
  bool attn_sinks = false;          // attn_sinks [n_head]: a logit per head in the softmax's denominator (gpt-oss)
  // deepseek2's multi-head latent attention (forward_deepseek2.cpp): q through a low-rank pair
  // (attn_q_a, attn_q_a_norm, attn_q_b) or attn_q; keys and values from one compressed row
  // (attn_kv_a_mqa, attn_kv_a_norm) expanded by attn_kv_b, or by attn_k_b / attn_v_b (HParams' MLA fields).
  bool mla = false;
  bool moe = false;                 // experts when <arch>.expert_count > 0 (ffn_gate_inp + ffn_*_exps)
  MoeSpec experts;                  // how the experts route and compute (defaults: mixtral's)

  bool embd_scale = false;          // x = token_embd[t] * sqrt(n_embd) (gemma family)
  bool embd_norm = false;           // token_embd_norm (bias per Biases::norm) on the embeddings (bloom)
  float attn_scale = 0.0f;          // multiplier of q.k; 0: 1/sqrt(head_dim_k)
  // llama.cpp multiplies q by the scale before attention for some architectures: the same maths,
  // but q is rounded to the cache's type after scaling under Numerics::kLlamaCpp.
  bool scale_q_first = false;
  float clamp_kqv = 0.0f;           // > 0: q, k, v clamped to [-c, c] after projection (olmo, mpt: from the file)
  bool softcaps = false;            // reads attn_logit_softcapping / final_logit_softcapping (gemma2)
  float attn_softcap = 0.0f;        // > 0: score = c * tanh(score / c) (set from the file when softcaps)
  float final_softcap = 0.0f;       // > 0: logit = c * tanh(logit / c)
  float logit_scale = 0.0f;         // != 0: logits *= logit_scale (command-r, cohere2: <arch>.logit_scale)

  // Sliding-window attention: when the file has <arch>.attention.sliding_window, layers with
  // l % swa_pattern < swa_pattern - 1 see only the window (0: the window is ignored, as llama.cpp does
  // for llama and phi3). The file's attention.sliding_window_pattern overrides the pattern.
  int swa_pattern = 0;
  bool swa_symmetric = false;       // the window reaches window / 2 positions either way (gemma-embedding)
  bool swa_dense_first = false;     // layers l % pattern != 0 have the window (modern-bert), not l % pattern < pattern - 1
  // The pre-norm of layer 0's attention may be absent (modern-bert: identity there).
  Has attn_norm_layer0 = Has::kYes;
  float rope_base_swa = 0.0f;       // rope base of window layers without rope.freq_base_swa (0: global)
  float rope_scale_swa = 0.0f;      // rope scaling of window layers (0: the global layers')

  Recurrent recurrent = Recurrent::kNone;  // the mixer of recurrent layers
  // Some layers attend, the others are recurrent: the file's per-layer attention.head_count_kv
  // says which (0: recurrent; HParams::kv_free_layer). false: every layer is recurrent.
  bool hybrid = false;
  Tn output_norm = Tn::kOutputNorm;  // the final norm's tensor (lfm2: token_embd_norm)
  // falcon-h1: every layer runs the recurrent mixer beside its attention, from the same norm.
  bool ssm_beside_attention = false;
  Has ssm_conv_bias = Has::kYes;  // Mamba-2's ssm_conv1d.bias (falcon-h1, granitehybrid: optional)
  Has ssm_norm = Has::kYes;       // Mamba-2's grouped norm (falcon-h1: optional)
  // Granite's scales (0: off; set from the file's keys by the configure hook): x = token_embd *
  // embd_mult; each sub-block's output * residual_mult before the residual add; logits / logit_div.
  float embd_mult = 0.0f;
  float residual_mult = 0.0f;
  float logit_div = 0.0f;
  // qwen35: every attention_interval-th layer attends, the others are recurrent, unless the file's
  // <arch>.full_attention_interval says otherwise (0: the layer pattern comes from head_count_kv).
  int attention_interval = 0;
  bool rope_swa_only = false;       // rotary positions on window layers only; global layers have none (cohere2)
  bool rope_base_swa_unused = false;  // rope.freq_base_swa read by llama.cpp but not used (olmo2, cohere2)
  // llama4: window layers attend within their chunk of attn_chunk positions (which replaces the
  // file's window); layers with (l + 1) % nope_step == 0 have no rotary positions and, with
  // attn_temp, scale q by llama.cpp's temperature log(floor((pos + 1) / 8192) + 1) * 0.1 + 1.
  int attn_chunk = 0;
  int nope_step = 0;
  bool attn_temp = false;
  bool qk_unit_norm = false;        // llama4: q and k heads RMS-normalised (no weight) after rotation, where rotated
  // YaRN (rope.scaling.type yarn, core/model/rope_scaling.h): llama_hparams' defaults, which some
  // architectures' configure overrides from rope.scaling.yarn_beta_fast / yarn_beta_slow /
  // yarn_log_multiplier (mistral3). A log multiplier != 0 divides YaRN's magnitude as HF's mscale_all_dim.
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  float yarn_log_mul = 0.0f;
  // Llama 4 attention temperature (attention.temperature_scale, read by configure; 0: off): q at
  // position p is multiplied by 1 + t * ln(floor(p / rope.scaling.original_context_length) + 1).
  float attn_temp_scale = 0.0f;
  // deepseek2 (Mistral Large 3): the divisor of p in that temperature is attention.temperature_length.
  int attn_temp_length = 0;

  // Granite / MiniCPM multipliers (set by configure from the file; 0: off): token embeddings times
  // embd_mult, each sub-block's output times residual_mult before its residual add, logits times
  // logit_mult.
  float logit_mult = 0.0f;
  // NoPE layers: layer l does not rotate q and k when (l + 1) % no_rope_layer_step == 0 (smollm3: 4;
  // 1: no layer rotates). 0: every layer rotates.
  int no_rope_layer_step = 0;
  // exaone4: no attn_norm / ffn_norm before the sub-blocks (post_norms only); with a sliding
  // window, only the window layers rotate (the global ones are NoPE); the window when the file has
  // no attention.sliding_window (0: none).
  int n_swa_default = 0;
  // ALiBi's maximum bias (baichuan 13B: 8, set by configure; 0: none): attention adds a per-head
  // linear distance penalty (AttentionParams::alibi_max_bias).
  // hunyuan-dense: q/k head norms after rotation instead of before; and the NTK-aware base
  // base * alpha^(d / (d - 2)) (d: the head size) for a file's rope.scaling.alpha.
  bool rope_alpha_base = false;

  // Encoders (bert): every token attends to its whole sequence, not only to what precedes it. The
  // file's <arch>.attention.causal, where present, decides (HParams::causal_attn).
  bool causal_attention = true;
  Has token_types = Has::kNo;  // token_types [n_embd, n_token_types]: row 0 added to every token (as llama.cpp)
  ClsHead cls_head;  // rerankers' classification head (rank pooling)
  // Residual::kPostNorm's second attention norm (jina-bert-v2: attn_norm_2, where the file has it):
  // x = norm2(norm1(x + attn(x)) + x), x the block's input.
  Has attn_norm_2 = Has::kNo;
  // T5's encoder (t5encoder): layers named enc.blk.N.* (encoder_role), with attn_o for the output
  // projection; each score gains a learned bias per head and relative-position bucket (attn_rel_b,
  // {n_head, rel_buckets}: a layer's own, else layer 0's, as llama.cpp) from this many buckets (0:
  // none; configure reads the file's attention.relative_buckets_count).
  bool enc_tensors = false;
  int rel_buckets = 0;
  NextnSpec nextn;
};

}  // namespace ox
