// Llama 4 (Scout, Maverick): llama-shaped; every interleave_moe_layer_step-th layer has experts
// chosen by the router logits whose sigmoid weight scales the expert's input, plus a shared expert
// as wide as a routed one; the others are dense. Layers with (l + 1) % 4 == 0 have no rotary
// positions, global attention and llama.cpp's attention temperature on q; the rest RMS-normalise
// q and k after rotation (but Maverick, 128 experts) and attend within
// chunks of 8192 positions (sliding_window_pattern, default 4). A file whose attention.sliding_window
// is 0 has neither chunks nor temperature, and only its last layer is without positions (as in
// llama.cpp).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& f, const HParams& hp, ArchSpec& spec) {
  if (hp.n_moe_layer_step <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s.interleave_moe_layer_step'",
                                                 f.name().c_str(), hp.arch.c_str()));
  }
  spec.qk_unit_norm = hp.n_expert != 128;  // as llama.cpp: every size but Maverick (17B-128E)
  if (f.find(hp.arch + ".attention.sliding_window") != nullptr && hp.n_swa == 0) {
    spec.swa_pattern = 0;
    spec.attn_chunk = 0;
    spec.nope_step = hp.n_layer;
    spec.attn_temp = false;
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef llama4{
    .name = "llama4",
    .spec = {.bias = {.qkv = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .moe = true,
             .experts = {.gating = MoeGating::kSigmoid,
                         .norm_w = false,
                         .ff = ExpertFf::kRequired,
                         .shared = SharedFf::kExpertFf,
                         .weight_input = true},
             .swa_pattern = 4,
             .attn_chunk = 8192,
             .nope_step = 4,
             .attn_temp = true},
    .configure = configure,
    .synth_keys = {{"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 256},
                   {"interleave_moe_layer_step", SynthKey::kU32, 2},
                   {"block_count", SynthKey::kU32, 4}},
};

}  // namespace ox::archs
