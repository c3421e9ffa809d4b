// Falcon-H1: a parallel hybrid. Each layer's RMSNorm feeds both a GQA attention (NEOX rope,
// optional biases) and a Mamba-2 mixer whose outputs are summed into the residual, then a SwiGLU
// feed-forward (optional biases). llama.cpp names its feed-forward norm "blk.N.ffn_norm" without a
// suffix, takes the conv bias and the Mamba-2 norm only where the file has them, and ignores an
// attention output bias and rope_freqs.
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  return check_ssm_hparams(file, hp, Recurrent::kMamba2);
}

}  // namespace

extern const ArchDef falcon_h1{
    .name = "falcon-h1",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn_norm = Tn::kFfnNormBare,
             // attn_output.bias: llama.cpp loads it when present but never adds it, so it is not planned
             .bias = {.qkv = Has::kOptional, .ffn = Has::kOptional},
             .recurrent = Recurrent::kMamba2,
             .hybrid = true,
             .ssm_beside_attention = true,
             .ssm_conv_bias = Has::kOptional,
             .ssm_norm = Has::kOptional},
    .configure = configure,
    .forward = forward_falcon_h1,
    .synth_keys = {{"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 512},
                   {"ssm.state_size", SynthKey::kU32, 16},
                   {"ssm.time_step_rank", SynthKey::kU32, 8},
                   {"ssm.group_count", SynthKey::kU32, 2}},
};

}  // namespace ox::archs
