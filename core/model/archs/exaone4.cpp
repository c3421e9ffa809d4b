// EXAONE 4: no norms before attention and feed-forward, RMS norms on their outputs instead
// (post_attention_norm / post_ffw_norm), q/k head norms before NEOX rotation. The 64-layer model
// (32B) alone uses a sliding window (attention.sliding_window, else 4096) on three layers of four,
// and its global layers have no rotary positions; other sizes ignore the window, as llama.cpp does.
// Multi-token-prediction blocks (nextn_predict_layers) are checked and not run (ArchSpec::nextn).
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile&, const HParams& hp, ArchSpec& s) {
  if (hp.n_layer == 64) {
    s.swa_pattern = 4;
    s.n_swa_default = 4096;
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef exaone4{
    .name = "exaone4",
    .spec = {.pre_norms = false,
             .rope_style = RopeStyle::kNeox,
             .bias = {.qkv = Has::kOptional},
             .rope_freqs = Has::kOptional,
             .qk_norm = true,
             .post_norms = true,
             .rope_swa_only = true,
             .nextn = {.on = true, .own_embd_head = false}},
    .configure = configure,
    // A window the two-layer parity model must ignore (as llama.cpp does below 64 layers).
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 4},
                   // exaone4@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
};

}  // namespace ox::archs
