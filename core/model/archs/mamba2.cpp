// Mamba-2: Mamba's layout with the SSD mixer: one input projection to z | x B C | dt, the causal
// convolution over x B C, a scan whose decay A is a scalar per head and whose B, C are shared by
// groups of heads, a skip through D per head, silu(z) gating and an RMSNorm per group before the
// output projection (forward_mamba.cpp).
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  return check_ssm_hparams(file, hp, Recurrent::kMamba2);
}

}  // namespace

extern const ArchDef mamba2{
    .name = "mamba2",
    .spec = {.recurrent = Recurrent::kMamba2},
    .configure = configure,
    .forward = forward_mamba,
    .synth_keys = {{"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 512},
                   {"ssm.state_size", SynthKey::kU32, 16},
                   {"ssm.time_step_rank", SynthKey::kU32, 8},
                   {"ssm.group_count", SynthKey::kU32, 2}},
};

}  // namespace ox::archs
