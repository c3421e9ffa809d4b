// LFM2: a hybrid of attention layers (q/k RMSNorm per head, NEOX rope) and gated short-convolution
// layers, told apart by the per-layer attention.head_count_kv (0: convolution); every layer ends in
// a SwiGLU feed-forward. The final norm is named token_embd_norm (forward_lfm2.cpp).
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  bool any_conv = false;
  for (bool kv_free : hp.kv_free_layer) any_conv = any_conv || kv_free;
  if (any_conv && hp.shortconv_l_cache < 2) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s.shortconv.l_cache' must be at least 2 (it is %d)",
                                                 file.name().c_str(), hp.arch.c_str(), hp.shortconv_l_cache));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef lfm2{
    .name = "lfm2",
    .spec = {.rope_style = RopeStyle::kNeox,
             .qk_norm = true,
             .recurrent = Recurrent::kShortConv,
             .hybrid = true,
             .output_norm = Tn::kOutputNormLfm2},
    .configure = configure,
    .forward = forward_lfm2,
    .synth_keys = {{"attention.head_count_kv", SynthKey::kU32Layers, 0, "0,2"},
                   {"shortconv.l_cache", SynthKey::kU32, 3}},
};

}  // namespace ox::archs
