// Model: hyperparameters plus views of the weights inside a GgufFile, and the forward pass of its
// architecture. Architectures are data (an ArchDef per file in archs/, arch_registry.h) read by one
// generic decoder (decoder.cpp); model.cpp looks `general.architecture` up in the registry.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/kv_cache/kv_cache.h"
#include "core/model/arch_spec.h"
#include "core/model/batch.h"
#include "core/model/hparams.h"
#include "core/ops/ops.h"
#include "core/tensor/tensor.h"

namespace ox {

// Per-layer attention settings (sliding-window layers may use another rope base).
struct LayerAttention {
  int window = 0;  // > 0: each token sees only the last `window` positions (itself included)
  bool chunked = false;      // the window is a chunk: positions [pos / window * window, pos] (llama4)
  bool temp_tuning = false;  // q scaled by the attention temperature (llama4's layers without rope)
  RopeParams rope;
  // This layer's heads (window layers may have their own size and KV head count: gemma4) and the
  // cache layer holding its keys and values: its own, or an earlier layer's for the layers that
  // reuse K/V (HParams::n_kv_shared_layers), which store none.
  int n_head_kv = 0;
  int head_dim_k = 0;
  int head_dim_v = 0;
  int kv_layer = 0;
  bool stores_kv = true;
};

// RWKV-7's tensors of one block (rwkv7_mixer.cpp): the time mix's low-rank maps (w: decay, a: in-
// context learning rate, v: value residual, g: gate; *0 are their biases), the six token-shift
// mixes (lerp_fused rows r, w, k, v, a, g), k/r scales, projections and group norm; the channel mix.
// Vectors and the small low-rank matrices are f32.
struct Rwkv7Weights {
  Tensor w0, w1, w2, a0, a1, a2, v0, v1, v2, g1, g2;
  Tensor lerp_fused, k_k, k_a, r_k;
  Tensor key, value, receptance, output, ln, ln_b;
  Tensor cm_lerp_k, cm_key, cm_value;
};

// Tensors of one transformer block. A tensor an architecture does not use stays empty; fused
// tensors (attn_qkv, phi3's gate|up) are loaded as row views, so wq/wk/wv and ffn_gate/ffn_up
// are always separate here.
struct LayerWeights {
  Tensor attn_norm, attn_norm_b;
  Tensor wq, wk, wv, wo;
  Tensor bq, bk, bv, bo;
  Tensor q_norm, k_norm;              // [head_dim_k] RMSNorm weights applied to every head
  Tensor q_norm_b, k_norm_b;          // LayerNorm biases of q/k norms over the row (jina-bert-v2)
  Tensor attn_norm_2, attn_norm_2_b;  // ArchSpec::attn_norm_2 (jina-bert-v2)
  Tensor attn_post_norm;              // norm of the attention output before the residual add
  Tensor ffn_norm, ffn_norm_b;
  Tensor ffn_gate, ffn_up, ffn_down;
  Tensor ffn_gate_b, ffn_up_b, ffn_down_b;
  Tensor ffn_post_norm;
  Tensor attn_out_norm, attn_out_norm_b;    // Residual::kPostNorm (bert): after the attention's residual add
  Tensor layer_out_norm, layer_out_norm_b;  // and after the feed-forward's
  XieluParams xielu;  // apertus: the feed-forward activation's learned parameters (FfnKind::kXielu)
  // Mixture of experts: router [n_expert x n_embd] and n_expert matrices per projection.
  Tensor ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps;
  // State-space layers (mamba, mamba2): in/out projections, the depthwise convolution, x -> (dt, B, C)
  // and dt's projection (mamba), A, D and Mamba-2's grouped norm. conv1d, a, d, norm are f32.
  // lfm2's short-convolution layers use ssm_in / ssm_conv1d / ssm_out for in_proj / conv / out_proj.
  Tensor ssm_in, ssm_conv1d, ssm_conv1d_b, ssm_x, ssm_dt, ssm_dt_b, ssm_a, ssm_d, ssm_norm, ssm_out;
  Rwkv7Weights rwkv;
  // qwen35's gated delta net (its q|k|v projection is attn_qkv, held in wq): the output gate's
  // projection and the per-head learning-rate (beta) and decay (alpha) projections.
  Tensor attn_gate, ssm_beta, ssm_alpha;
  Tensor exp_probs_b;                                  // [n_expert] bias of the scores experts are chosen by
  Tensor ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp;  // shared expert
  Tensor ffn_gate_inp_shexp;                           // [n_embd] qwen2moe's shared-expert gate
  Tensor ffn_gate_inp_b;                               // [n_expert] router bias (gpt-oss)
  Tensor ffn_gate_exps_b, ffn_up_exps_b, ffn_down_exps_b;  // F32, one row per expert (gpt-oss)
  Tensor attn_sinks;                                   // [n_head] (gpt-oss)
  Tensor attn_rel_b;  // F32 [n_buckets][n_head] T5's relative position bias (ArchSpec::rel_buckets)
  // Multi-head latent attention (deepseek2): q = attn_q_b(rmsnorm(attn_q_a h)) (or wq); the
  // compressed row [c | k_rot] = attn_kv_a_mqa h, c normalised by kv_a_norm; per-head k_nope and v
  // from c by wkv_b (rows per head [k_nope | v]), or by wk_b [n_head][kv_lora x nope] / wv_b [n_head][v x kv_lora].
  Tensor wq_a, wq_b, q_a_norm, wkv_a_mqa, kv_a_norm, wkv_b, wk_b, wv_b;
  // gemma4: the per-layer input's gate [n_embd -> n_embd_per_layer], projection back and norm; the
  // layer's output scalar [1]; the MoE block's norms (pre_ffw_norm_2 before the experts,
  // post_ffw_norm_1 / _2 after the dense and the expert branch), the router input's scale
  // [n_embd] and each expert's output scale [n_expert].
  Tensor per_layer_inp_gate, per_layer_proj, per_layer_post_norm, out_scale;
  Tensor ffn_pre_norm_2, ffn_post_norm_1, ffn_post_norm_2, ffn_gate_inp_s, ffn_down_exps_s;
  // gemma3n: AltUp's router [n_embd -> n_altup] and its norm, prediction [n_altup -> n_altup^2] and
  // correction [n_altup -> n_altup] coefficients, the correction's scale [n_embd]; LAuReL's
  // low-rank pair and norm.
  Tensor altup_router, altup_router_norm, altup_predict_coef, altup_correct_coef, altup_correct_scale;
  Tensor laurel_l, laurel_r, laurel_post_norm;
};

struct ModelWeights {
  Tensor token_embd;
  Tensor token_embd_norm, token_embd_norm_b;  // norm of the embeddings (bloom, RWKV), else empty
  Tensor position_embd;  // learned absolute positions (gpt2), else empty
  Tensor output_norm, output_norm_b;
  Tensor output;  // may alias token_embd (tied embeddings)
  Tensor output_b;
  Tensor rope_freqs;
  Tensor token_types;  // [n_token_types, n_embd] (bert), else empty
  // Classification head (rank pooling): cls [n_embd, n_embd] + cls_b, cls_out [n_cls_out, n_embd]
  // + cls_out_b; any may be empty.
  Tensor cls, cls_b, cls_out, cls_out_b;
  Tensor cls_norm;  // [n_embd] modern-bert: LayerNorm weight after cls
  // gemma4's per-layer inputs: a token table of n_layer * n_embd_per_layer per token, the
  // projection of the embeddings to the same width, and its norm [n_embd_per_layer].
  Tensor per_layer_token_embd, per_layer_model_proj, per_layer_proj_norm;
  // gemma3n: n_altup - 1 matrices [n_embd x n_embd] each, to the extra AltUp streams and back.
  Tensor altup_proj, altup_unembd_proj;
  std::vector<LayerWeights> layers;
};

// How a forward pass rounds (the KV cache's element types are a separate setting, f16 by default).
// kF32: f32 activations, f32 softmax-weighted sums of values (the default). kLlamaCpp: the two
// places where llama.cpp's CPU backend rounds further, for bit-level parity tests against its
// output: attention keeps its running sum of values in f16 (its decode path; needs an F16 cache)
// and GELU goes through an f16 table. Embedding passes (forward_hidden) of a decoder take only the
// GELU table: llama.cpp's attention over its cache sums in f32 there.
enum class Numerics { kF32, kLlamaCpp };

// Working memory of a forward pass, sized once for the largest batch (no allocation per token).
struct ForwardState {
  OpContext ops;
  KvCache kv;
  int max_batch = 0;
  Numerics numerics = Numerics::kF32;
  std::vector<BatchToken> batch;  // [max_batch] Model::forward's tokens, as a batch of one run
  std::vector<SeqRun> runs;       // [max_batch] the runs of the batch being evaluated
  // Shapes with n = tokens in the batch:
  std::vector<float> x;        // [n, n_embd] residual stream
  std::vector<float> h;        // [n, n_embd] normalised input of a sub-block
  std::vector<float> h2;       // [n, n_embd] second normalised input (parallel blocks with two norms)
  std::vector<float> q;        // [n, n_head * head_dim_k]
  std::vector<float> k;        // [n, n_head_kv * head_dim_k]
  std::vector<float> v;        // [n, n_head_kv * head_dim_v]
  std::vector<float> att;      // [n, n_head * head_dim_v]
  std::vector<float> proj;     // [n, n_embd] attention output
  std::vector<float> ffn_out;  // [n, n_embd] feed-forward output
  std::vector<float> gate;     // [n, n_ff]
  std::vector<float> up;       // [n, n_ff]
  // Mixture of experts (empty for dense models):
  std::vector<float> router;     // [n, n_expert] router probabilities
  std::vector<int32_t> routed;   // [n, n_expert_used] chosen experts
  std::vector<float> route_w;    // [n, n_expert_used] their weights
  std::vector<int32_t> members;  // [n] tokens routed to the expert being computed
  std::vector<float> moe_in;     // [n, n_embd] those tokens' inputs, gathered
  std::vector<float> moe_out;    // [n, n_embd] the expert's outputs for them
  // Recurrent mixers' temporaries (forward_ssm.cpp carves them): [n, recurrent_dims().scratch].
  std::vector<float> mixer;
  std::vector<float> moe_gate;   // [n, max(n_ff_exp, n_ff_shexp)] an expert's gate activations
  std::vector<float> moe_up;     // [n, max(n_ff_exp, n_ff_shexp)] its up projection
  std::vector<float> moe_scores; // [n_expert] one token's scores for choosing
  std::vector<float> rel_bias;   // [2 * n_kv - 1, n_head] T5's bias per key - query distance (one layer's)
  // gemma4's per-layer inputs [n, n_layer * n_embd_per_layer], then room for one token's table row
  // or the batch's [n, n_embd_per_layer] gate (empty without per-layer inputs).
  std::vector<float> per_layer;
  // gemma3n's AltUp streams and their predictions [2, n_altup, n, n_embd] (empty otherwise).
  std::vector<float> altup;
  // Embedding passes (Model::forward_hidden): the output rows are the final hidden states (after
  // the output norm, before the lm head), and each run's keys and values are packed into sequence
  // 0 of the cache at the run's batch offset, so the cache holds max_batch positions in all.
  bool hidden_output = false;
};

// What Model::new_state allocates, in bytes (Model::state_bytes).
struct StateBytes {
  uint64_t kv = 0;           // the KV cache (KvCache::bytes_needed)
  uint64_t buffers = 0;      // ForwardState's buffers, exactly as new_state sizes them
  uint64_t act_scratch = 0;  // a bound on OpContext::act_scratch, which the first batch grows
};

class Model {
 public:
  // Validates architecture, hyperparameters and every tensor's name, type and shape.
  static Result<std::shared_ptr<const Model>> load(std::shared_ptr<const gguf::GgufFile> file);

  const HParams& hparams() const { return hparams_; }
  const gguf::GgufFile& file() const { return *file_; }
  const ModelWeights& weights() const { return weights_; }
  const ArchSpec& spec() const { return spec_; }
  const std::vector<LayerAttention>& layers() const { return layers_; }

  // Sizes a ForwardState for n_seq sequences of n_ctx positions and batches of up to max_batch
  // tokens, with a KV cache of the given element types (kKvCacheTypes). Refuses, naming the bytes,
  // what does not fit in memory. Causal sliding-window layers keep only their window (about window
  // + max_batch positions per sequence, as llama.cpp's SWA cache) unless swa_full.
  Result<std::unique_ptr<ForwardState>> new_state(int n_ctx, int max_batch, const kernels::KernelTable* kernels,
                                                  ThreadPool* pool, DType cache_type_k = DType::F16,
                                                  DType cache_type_v = DType::F16, int n_seq = 1,
                                                  bool swa_full = false) const;
  // The bytes new_state(n_ctx, max_batch, ...) checks against memory_budget() before allocating
  // them; kInvalidArgument for a non-positive size.
  Result<StateBytes> state_bytes(int n_ctx, int max_batch, DType cache_type_k, DType cache_type_v, int n_seq = 1,
                                 bool swa_full = false) const;
  // The KV cache new_state would allocate (types and size checked by KvCache).
  KvCacheShape kv_shape(int n_ctx, int max_batch, DType cache_type_k, DType cache_type_v, int n_seq = 1,
                        bool swa_full = false) const;

  // Runs tokens at positions pos0.. of sequence 0 through the model, filling the KV cache; sequence
  // 0 then holds pos0 + tokens.size() positions (evaluating at pos0 below what it held drops the
  // rest first). logits receives [n_vocab] floats for the last token (or [tokens.size()][n_vocab]
  // when all_logits). Precondition (checked by the session): 1 <= tokens.size() <= max_batch,
  // pos0 <= the positions sequence 0 holds, pos0 + tokens.size() <= n_ctx, ids < n_vocab.
  void forward(ForwardState& st, std::span<const int32_t> tokens, int64_t pos0, bool all_logits,
               float* logits) const;

  // One forward pass over tokens of several sequences (continuous batching). logits receives
  // [n_vocab] floats for each token whose `logits` is set, in batch order. Checks the batch first
  // (check_batch) and changes nothing if it is refused; afterwards every sequence in the batch holds
  // up to its last position + 1.
  Status forward_batch(ForwardState& st, std::span<const BatchToken> batch, float* logits) const;
  // What forward_batch refuses, as an error naming the token: an empty batch or one larger than
  // max_batch, a token id outside the vocabulary, a sequence id outside [0, n_seq), and positions
  // that do not continue their sequence: a sequence's tokens, in batch order, must be at positions
  // n_pos(seq), n_pos(seq) + 1, ... (llama.cpp's rule: to go back, seq_rm first), below n_ctx.
  Status check_batch(const ForwardState& st, std::span<const BatchToken> batch) const;

  // An embedding pass: each sequence of the batch whole, in one run starting at position 0 (runs
  // never attend to each other, whatever their seq ids), nothing kept afterwards. hidden receives
  // [n_embd] floats for each token whose `logits` is set, in batch order: the final hidden state.
  // Errors: a batch check_batch-like checks refuse (size, ids, positions not 0, 1, ...), or an
  // architecture whose forward pass cannot yield hidden states (can_embed()).
  Status forward_hidden(ForwardState& st, std::span<const BatchToken> batch, float* hidden) const;
  // Whether forward_hidden works: the generic decoder's architectures (recurrent ones excepted).
  bool can_embed() const;
  // Rank pooling's head on one pooled vector (llama.cpp's build_pooling): tanh(cls x + b) when the
  // file has cls, then cls_out x + b when it has cls.output, then a softmax where the spec's head
  // says (ClsHead). out: [n_cls_out] (or cls's rows without cls.output). Returns the output's length.
  // f16_gelu: GELU through llama.cpp's f16 table (Numerics::kLlamaCpp).
  int64_t classify(OpContext& ops, const float* pooled, float* scratch, float* out, bool f16_gelu = false) const;
  bool has_classifier() const { return !weights_.cls.empty() || !weights_.cls_out.empty(); }

  // Context shift of sequence seq: drops positions [n_keep, n_keep + n_discard) of the n_past it
  // holds, moves the rest down and rotates their keys back by n_discard positions (dequantized,
  // rotated, stored again in the cache's type), as llama.cpp's seq_rm + seq_add do; seq then holds
  // n_past - n_discard. Without rotary embeddings (ALiBi, or no positions) the rows only move.
  // kUnsupported for learned absolute positions, which cannot be moved.
  // A pure recurrent model (mamba) keeps its state and only renumbers the positions, as llama.cpp
  // does: the state cannot forget, but the context can go on past n_ctx.
  Status shift(ForwardState& st, int64_t n_keep, int64_t n_discard, int64_t n_past, int seq = 0) const;
  // llama_memory_seq_rm: removes positions [p0, p1) of sequence seq (p1 < 0: to the end). A tail
  // (p1 at or past what seq holds) is only a shorter sequence, for every model; a middle range is a
  // context shift (shift()), so it needs a model without learned positions.
  // With recurrent state only the whole sequence can be removed (p0 = 0, p1 to the end: the state
  // is cleared); anything else is kUnsupported.
  Status seq_rm(ForwardState& st, int seq, int64_t p0, int64_t p1) const;
  bool can_shift() const { return spec_.rope || weights_.position_embd.empty(); }
  // Recurrent layers keep per-sequence state in the cache (kv.rs()): a sequence can be continued,
  // cleared or copied whole, never cut back to an earlier position (seq_rm refuses).
  bool has_recurrent_state() const { return spec_.recurrent != Recurrent::kNone; }

 private:
  friend struct ModelBuilder;
  Status shift_recurrent(ForwardState& st, int64_t n_keep, int64_t n_discard, int64_t n_past, int seq) const;
  using ForwardFn = void (*)(const Model&, ForwardState&, std::span<const BatchToken>, float*);
  std::shared_ptr<const gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  ArchSpec spec_;
  std::vector<LayerAttention> layers_;  // [n_layer]
  ForwardFn forward_ = nullptr;
  std::deque<std::vector<float>> converted_;  // f32 copies of small non-f32 tensors (norms)
};

}  // namespace ox
