// Ling / Bailing MoE (bailingmoe): llama-shaped attention with heads rope.dimension_count wide;
// every layer with experts (softmax routing; renormalisation and scale from the file) and
// expert_shared_count shared experts.
#include "core/model/arch_registry.h"
#include "core/model/moe.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  if (hp.n_rot != hp.head_dim_k || hp.n_rot != hp.head_dim_v) {  // llama.cpp sizes the heads by n_rot
    return error(ErrorCode::kUnsupported, strfmt("%s: bailingmoe heads must be rope.dimension_count wide", f.name().c_str()));
  }
  if (f.find(hp.arch + ".expert_shared_count") == nullptr) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing metadata key '%s.expert_shared_count'", f.name().c_str(), hp.arch.c_str()));
  }
  return read_moe_keys(f, hp, {.scale = true, .norm = true}, spec.experts);
}

}  // namespace

extern const ArchDef bailingmoe{
    .name = "bailingmoe",
    .spec = {.bias = {.qkv = Has::kOptional},
             .output = Has::kYes,
             .moe = true,
             .experts = {.norm_w = false, .ff = ExpertFf::kRequired, .shared = SharedFf::kExpTimesCount}},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"expert_shared_count", SynthKey::kU32, 1},
                   {"expert_weights_norm", SynthKey::kBool, 1},
                   {"expert_weights_scale", SynthKey::kF32, 2.5}},
};

}  // namespace ox::archs
