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
  kAttnNorm, kAttnNorm2, kAttnQ, kAttnK, kAttnV, kAttnQkv, kAttnOutput, kAttnQNorm, kAttnKNorm, kAttnPostNorm,
  kFfnNorm, kFfnGate, kFfnUp, kFfnDown, kFfnPostNorm,
  kFfnGateInp, kFfnGateExps, kFfnUpExps, kFfnDownExps,
  // Mixture of experts: shared experts, qwen2moe's shared-expert gate, deepseek v3's choice bias.
  kFfnGateInpShexp, kFfnGateShexp, kFfnUpShexp, kFfnDownShexp, kFfnExpProbsB,
  kAttnSinks,  // gpt-oss: a softmax logit per head
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
};

const TensorNameRow& tensor_row(Tn role);
std::span<const TensorNameRow> tensor_rows();
// "blk.3.attn_q.weight" / "output_norm.bias"; layer is ignored for model-level tensors.
std::string tensor_name(Tn role, int layer = -1, std::string_view suffix = "weight");

// The quantize group of any tensor name, of any architecture (llama.cpp matches by substring, so
// ffn_up_exps and ffn_up_shexp are ffn_up; attn_qkv and MLA's attn_kv_b take attn_v's rules).
QuantGroup quant_group_of(std::string_view name);

}  // namespace ox
