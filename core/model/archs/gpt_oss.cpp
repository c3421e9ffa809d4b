// gpt-oss: attention with q/k/v/output biases, heads rope.dimension_count wide, a learned sink
// logit per head, a sliding window on every other layer (even layers); the feed-forward's RMSNorm
// is named post_attention_norm; experts chosen by the router logits (plus its bias), weighted by
// the softmax of the chosen, with biases and gpt-oss's clamped SwiGLU. Experts usually come in
// MXFP4.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec&) {
  if (hp.n_rot != hp.head_dim_k || hp.n_rot != hp.head_dim_v) {  // llama.cpp sizes the heads by n_rot
    return error(ErrorCode::kUnsupported, strfmt("%s: gpt-oss heads must be rope.dimension_count wide", f.name().c_str()));
  }
  if (hp.n_swa <= 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key '%s.attention.sliding_window'", f.name().c_str(), hp.arch.c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef gpt_oss{
    .name = "gpt-oss",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn_norm = Tn::kAttnPostNorm,
             .bias = {.qkv = Has::kOptional, .attn_out = Has::kYes},
             .output = Has::kYes,
             .attn_sinks = true,
             .moe = true,
             .experts = {.gating = MoeGating::kSoftmaxAfterTopK,
                         .norm_w = false,
                         .act = ExpertAct::kSwiGluOai,
                         .ff = ExpertFf::kRequired,
                         .expert_biases = true},
             .swa_pattern = 2},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"attention.sliding_window", SynthKey::kU32, 4}},
};

}  // namespace ox::archs
