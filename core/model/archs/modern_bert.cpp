// modern-bert (ModernBERT, gte-modernbert, granite-embedding r2): a pre-norm encoder with
// LayerNorms without biases (none on layer 0's attention, where the file leaves it out), rotary
// positions, a fused qkv projection, GeGLU whose ffn_up holds [gate | up] (SwiGLU where the file's
// hidden_activation says silu), and local layers (all but every third, from layer 0) whose window
// reaches sliding_window / 2 positions either way, with their own rope base (rope.freq_base_swa).
// Its rerankers (gte-reranker-modernbert) pool the mean, then cls + GELU + cls.norm, cls.output.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

// llama.cpp's hidden_activation names (llm_ffn_op_type_from_string; an unknown name keeps GeGLU).
Status configure_modern_bert(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const std::string key = hp.arch + ".hidden_activation";
  OX_ASSIGN_OR_RETURN(const std::string_view act, file.get_string_or(key, "gelu"));
  if (act == "silu" || act == "swish" || act == "swiglu") s.ffn = FfnKind::kSwiGlu;
  if (act == "relu" || act == "reglu") {
    return error(ErrorCode::kUnsupported, strfmt("%s: '%s' is '%.*s': a ReGLU feed-forward is not supported",
                                                 file.name().c_str(), key.c_str(), static_cast<int>(act.size()),
                                                 act.data()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef modern_bert{
    .name = "modern-bert",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .output = Has::kNo,
             .fused_qkv = true,
             .qkv_either = false,
             .fused_gate_up = true,
             .embd_norm = true,
             .swa_pattern = 3,
             .swa_symmetric = true,
             .swa_dense_first = true,
             .attn_norm_layer0 = Has::kOptional,
             .causal_attention = false,
             .cls_head = {.dense = Has::kOptional,
                          .mean = true,
                          .gelu = true,
                          .norm = Has::kOptional,
                          .out = Has::kOptional,
                          .out_bias = Has::kOptional}},
    .configure = configure_modern_bert,
    // As many key/value heads as query heads: llama.cpp's attn_qkv is 3 * n_embd rows.
    .synth_keys = {{"attention.head_count_kv", SynthKey::kU32, 4},
                   {"attention.causal", SynthKey::kBool, 0},
                   {"pooling_type", SynthKey::kU32, 1},  // mean
                   {"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32, 2},
                   {"rope.freq_base_swa", SynthKey::kF32, 1000}},
};

}  // namespace ox::archs
