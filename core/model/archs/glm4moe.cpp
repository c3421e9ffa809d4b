// GLM-4.5 / 4.6 (glm4moe): NEOX rotary (partial: rope.dimension_count), q/k head norms where the
// file has them, the feed-forward's RMSNorm named post_attention_norm; the first
// leading_dense_block_count layers dense, the others with experts chosen by sigmoid scores plus
// exp_probs_b (gating, renormalisation and scale from the expert_* keys) and expert_shared_count
// shared experts. The multi-token-prediction blocks (nextn_predict_layers) are checked and not run;
// a file may leave them out (ArchSpec::nextn).
#include "core/model/arch_registry.h"
#include "core/model/moe.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  if (f.find(hp.arch + ".expert_shared_count") == nullptr) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key '%s.expert_shared_count'", f.name().c_str(), hp.arch.c_str()));
  }
  spec.qk_norm = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;  // optional in llama.cpp: all or none
  return read_moe_keys(f, hp, {.scale = true, .norm = true, .gating = MoeKeys::kOptional}, spec.experts);
}

}  // namespace

extern const ArchDef glm4moe{
    .name = "glm4moe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn_norm = Tn::kAttnPostNorm,
             .bias = {.qkv = Has::kOptional},
             .qk_norm = true,
             .moe = true,
             .experts = {.gating = MoeGating::kSigmoid,
                         .norm_w = false,
                         .ff = ExpertFf::kRequired,
                         .shared = SharedFf::kExpTimesCount,
                         .probs_bias = Has::kYes,
                         .leading_dense = true},
             .nextn = {.on = true, .trunk_only = true}},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"expert_shared_count", SynthKey::kU32, 1},
                   {"leading_dense_block_count", SynthKey::kU32, 1},
                   {"expert_weights_norm", SynthKey::kBool, 1},
                   {"expert_weights_scale", SynthKey::kF32, 2.5},
                   {"rope.dimension_count", SynthKey::kU32, 32},
                   // deepseek v3's group-limited routing (generic in llama.cpp): 2 groups of 2, 1 chosen
                   {"expert_group_count", SynthKey::kU32, 2},
                   {"expert_group_used_count", SynthKey::kU32, 1},
                   // glm4moe@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
};

}  // namespace ox::archs
