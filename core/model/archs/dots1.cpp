// dots.llm1 (dots1): Qwen3-like attention (q/k head norms, NEOX rotary; as many kv heads as
// heads), the first leading_dense_block_count layers dense, the others with experts
// (expert_gating_func, renormalisation and scale from the file, optional choice bias) and
// expert_shared_count shared experts.
#include "core/model/arch_registry.h"
#include "core/model/moe.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  if (hp.n_head_kv != hp.n_head) {  // llama.cpp sizes k and v by head_count
    return error(ErrorCode::kInvalidFile, strfmt("%s: dots1 needs head_count_kv == head_count", f.name().c_str()));
  }
  if (f.find(hp.arch + ".expert_shared_count") == nullptr) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key '%s.expert_shared_count'", f.name().c_str(), hp.arch.c_str()));
  }
  return read_moe_keys(f, hp, {.scale = true, .norm = true, .gating = MoeKeys::kRequired}, spec.experts);
}

}  // namespace

extern const ArchDef dots1{
    .name = "dots1",
    .spec = {.rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .output = Has::kYes,
             .qk_norm = true,
             .moe = true,
             .experts = {.norm_w = false,
                         .ff = ExpertFf::kRequired,
                         .shared = SharedFf::kExpTimesCount,
                         .probs_bias = Has::kOptional,
                         .leading_dense = true}},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"expert_shared_count", SynthKey::kU32, 1},
                   {"leading_dense_block_count", SynthKey::kU32, 1},
                   {"expert_weights_norm", SynthKey::kBool, 1},
                   {"expert_weights_scale", SynthKey::kF32, 2.5},
                   {"expert_gating_func", SynthKey::kU32, 2},
                   {"attention.head_count_kv", SynthKey::kU32, 4}},
};

}  // namespace ox::archs
