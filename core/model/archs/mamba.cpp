// Mamba: a pure state-space model. Every layer is RMSNorm then the selective-scan mixer (an input
// projection to x and a gate z, a causal depthwise convolution of x, the scan whose step size,
// B and C depend on the token, a skip through D, silu(z) gating, the output projection); no
// attention, no feed-forward. Its state per sequence lives in the cache (forward_mamba.cpp).
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  // FalconMamba's RMSNorm of dt, B and C (ssm.dt_b_c_rms) is not implemented: refuse, not misrun.
  OX_ASSIGN_OR_RETURN(const bool dt_b_c_rms, file.get_bool_or(hp.arch + ".ssm.dt_b_c_rms", false));
  if (dt_b_c_rms) {
    return error(ErrorCode::kUnsupported, strfmt("%s: '%s.ssm.dt_b_c_rms' (FalconMamba's norms of dt, B and C) is not "
                                                 "supported",
                                                 file.name().c_str(), hp.arch.c_str()));
  }
  return check_ssm_hparams(file, hp, Recurrent::kMamba);
}

}  // namespace

extern const ArchDef mamba{
    .name = "mamba",
    .spec = {.recurrent = Recurrent::kMamba},
    .configure = configure,
    .forward = forward_mamba,
    .synth_keys = {{"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 512},
                   {"ssm.state_size", SynthKey::kU32, 16},
                   {"ssm.time_step_rank", SynthKey::kU32, 16}},
};

}  // namespace ox::archs
