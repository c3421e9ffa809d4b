// jina-bert-v2 (jina-embeddings-v2, jina-reranker-v1): bert's post-norm encoder with ALiBi over
// both directions (-|i - j|, max bias 8) instead of learned positions, optional LayerNorms of the
// whole q and k rows, an optional second attention norm (attn_norm_2), a GeGLU feed-forward whose
// ffn_up holds [gate | up] (or a separate ffn_gate, or plain GELU: configure reads the file's layout)
// and the reranker's one-output head (cls [n_embd, 1] + bias, then tanh).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

// llama.cpp's three feed-forward layouts, told apart by the tensors (src/models/bert.cpp):
// ffn_up 2 * n_ff rows wide holds the gate (GeGLU); a separate ffn_gate is GeGLU too; else GELU.
Status configure_jina_v2(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const gguf::TensorInfo* up = file.find_tensor(tensor_name(Tn::kFfnUp, 0));
  if (up == nullptr) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", file.name().c_str(),
                                                 tensor_name(Tn::kFfnUp, 0).c_str()));
  }
  if (up->dims.size() == 2 && up->dims[1] == 2 * static_cast<uint64_t>(hp.n_ff)) return Status::ok();  // fused GeGLU
  s.fused_gate_up = false;
  if (file.find_tensor(tensor_name(Tn::kFfnGate, 0)) == nullptr) s.ffn = FfnKind::kGelu;
  return Status::ok();
}

}  // namespace

extern const ArchDef jina_bert_v2{
    .name = "jina-bert-v2",
    .spec = {.norm = NormKind::kLayer,
             .pre_norms = false,
             .rope = false,
             .position_embd = Has::kNo,
             .alibi_max_bias = 8.0f,
             .ffn = FfnKind::kGeGlu,
             .residual = Residual::kPostNorm,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kYes, .ffn = Has::kOptional, .norm = Has::kYes},
             .output = Has::kNo,
             .fused_gate_up = true,
             .qk_norms = {.has = Has::kOptional, .kind = NormKind::kLayer, .shape = QkNormShape::kRow,
                          .bias = Has::kOptional},
             .embd_norm = true,
             .causal_attention = false,
             .token_types = Has::kYes,
             .cls_head = {.dense = Has::kOptional, .dense_bias = Has::kOptional, .dense_to_one = true},
             .attn_norm_2 = Has::kOptional},
    .configure = configure_jina_v2,
    // As many key/value heads as query heads: llama.cpp's q/k norms are n_embd wide.
    .synth_keys = {{"attention.head_count_kv", SynthKey::kU32, 4},
                   {"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1}},  // mean, as jina-embeddings-v2's files say
};

}  // namespace ox::archs
