// The GGUF tensor names of every architecture, once: the loader (through the tensor plan), the
// quantize rules and `oxidize synth` read this table instead of spelling names themselves.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ox {

// Tensor roles, as llama.cpp's LLM_TENSOR_* (names in kTensorNames).
enum class Tn : uint8_t {
  kTokenEmbd, kPositionEmbd, kOutputNorm, kOutput, kRopeFreqs,
  kTokenEmbdNorm,  // bloom: a LayerNorm of the embeddings
  kAttnNorm, kAttnNorm2, kAttnQ, kAttnK, kAttnV, kAttnQkv, kAttnOutput, kAttnQNorm, kAttnKNorm, kAttnPostNorm,
  kFfnNorm, kFfnGate, kFfnUp, kFfnDown, kFfnPostNorm,
  kFfnGateInp, kFfnGateExps, kFfnUpExps, kFfnDownExps,
  // State-space layers (mamba, mamba2): ssm_a and ssm_d are named without a suffix.
  kSsmIn, kSsmConv1d, kSsmX, kSsmDt, kSsmA, kSsmD, kSsmNorm, kSsmOut,
  // lfm2: its final norm (llama.cpp's LLM_TENSOR_OUTPUT_NORM_LFM2) and short-convolution layers
  kOutputNormLfm2, kShortConvConv, kShortConvInProj, kShortConvOutProj,
  // RWKV-7: the norm after the embedding, the time mix's low-rank maps, token-shift mixes (lerp),
  // projections and group norm, the channel mix
  kTimeMixW0, kTimeMixW1, kTimeMixW2, kTimeMixA0, kTimeMixA1, kTimeMixA2, kTimeMixV0, kTimeMixV1,
  kTimeMixV2, kTimeMixG1, kTimeMixG2, kTimeMixLerpFused, kTimeMixKK, kTimeMixKA, kTimeMixRK, kTimeMixKey,
  kTimeMixValue, kTimeMixReceptance, kTimeMixLn, kTimeMixOutput, kChannelMixLerpK, kChannelMixKey, kChannelMixValue,
  // falcon-h1's feed-forward norm, which llama.cpp names without a suffix ("blk.%d.ffn_norm")
  kFfnNormBare,
  // qwen35's gated delta net: the output gate's projection and the per-head beta / alpha maps
  kAttnGate, kSsmBeta, kSsmAlpha,
  // Mixture of experts: shared experts, qwen2moe's shared-expert gate, deepseek v3's choice bias.
  kFfnGateInpShexp, kFfnGateShexp, kFfnUpShexp, kFfnDownShexp, kFfnExpProbsB,
  kAttnSinks,  // gpt-oss: a softmax logit per head
  // Encoders (bert): token type embeddings, the post norms of a block, the classification head
  kTokenTypes, kAttnOutNorm, kLayerOutNorm, kCls, kClsOut,
  kEncOutputNorm,  // neo-bert's final norm ("enc.output_norm")
  kClsNorm,        // modern-bert's reranker head: a LayerNorm after cls
  // T5's encoder (t5encoder): its layers, named enc.blk.N.*, and the relative position bias table
  kEncAttnNorm, kEncAttnQ, kEncAttnK, kEncAttnV, kEncAttnOut, kEncAttnRelB, kEncFfnNorm, kEncFfnGate, kEncFfnUp,
  kEncFfnDown,
  // deepseek2's multi-head latent attention: q's low-rank pair and its norm, the compressed k/v row
  // (with the rotated part of k) and its norm, its expansion to every head (attn_kv_b, or split into
  // attn_k_b / attn_v_b)
  kAttnQA, kAttnQB, kAttnQANorm, kAttnKvAMqa, kAttnKvANorm, kAttnKvB, kAttnKB, kAttnVB,
  // gemma4: per-layer token inputs (a second embedding table, its projection from the embeddings,
  // and each layer's gate, projection and norm), the layer's output scalar, the MoE block's extra
  // norms, its router's input scale and the experts' output scales.
  kPerLayerTokenEmbd, kPerLayerModelProj, kPerLayerProjNorm, kPerLayerInpGate, kPerLayerProj, kPerLayerPostNorm,
  kLayerOutScale, kFfnPreNorm2, kFfnPostNorm1, kFfnPostNorm2, kFfnGateInpScale, kFfnDownExpsScale,
  // gemma3n: AltUp's projections to and from the extra streams, each layer's router, prediction and
  // correction coefficients and correction scale; LAuReL's low-rank residual and its norm.
  kAltupProj, kAltupUnembdProj, kAltupCorrectCoef, kAltupCorrectScale, kAltupPredictCoef, kAltupRouter,
  kAltupRouterNorm, kLaurelL, kLaurelR, kLaurelPostNorm,
  kFfnGateUpExps,  // experts' gate and up projections in one tensor (MoeSpec::fused_gate_up)
  // Multi-token-prediction (NextN) blocks, the last <arch>.nextn_predict_layers ones (ArchSpec::nextn):
  // the projection of [norm(embedding) | norm(hidden)], those two norms, and the block's optional
  // own embedding, head and head norm. Checked at load, never run.
  kNextnEhProj, kNextnEnorm, kNextnHnorm, kNextnEmbedTokens, kNextnSharedHeadHead, kNextnSharedHeadNorm,
  kCount
};

// What llama.cpp's quantize rules call a tensor (llama_tensor_get_type_impl's name tests).
enum class QuantGroup : uint8_t { kNone, kTokenEmbd, kOutput, kAttnV, kAttnK, kAttnQ, kAttnOutput, kFfnUp, kFfnGate, kFfnDown };

struct TensorNameRow {
  Tn role;
  const char* base;   // "attn_q": blk.%d.attn_q.weight per layer, else "<base>.weight"
  bool per_layer;
  bool vector;        // norms, biases, rope_freqs: 1-D, converted to f32 at load
  QuantGroup group;
  bool bare = false;  // "blk.%d.ssm_a": no ".weight" / ".bias" suffix
  const char* block = "blk";  // per-layer names are "<block>.%d.<base>" (T5's encoder: "enc.blk")
};

const TensorNameRow& tensor_row(Tn role);
std::span<const TensorNameRow> tensor_rows();
// "blk.3.attn_q.weight" / "output_norm.bias"; layer is ignored for model-level tensors.
std::string tensor_name(Tn role, int layer = -1, std::string_view suffix = "weight");

// The quantize group of any tensor name, of any architecture (llama.cpp matches by substring, so
// ffn_up_exps and ffn_up_shexp are ffn_up; attn_qkv and MLA's attn_kv_b take attn_v's rules).
QuantGroup quant_group_of(std::string_view name);

// A transformer layer's role under T5's encoder names (kAttnQ -> kEncAttnQ, ...); other roles as they are.
Tn encoder_role(Tn role);

}  // namespace ox
