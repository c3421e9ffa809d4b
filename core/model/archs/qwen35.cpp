// Qwen3.5: a hybrid of gated delta net layers (linear attention with a per-head matrix state, a
// causal convolution over q k v, a gated RMSNorm) and, every full_attention_interval-th layer
// (default 4), attention whose q projection also yields a sigmoid output gate, with q/k RMSNorm and
// interleaved M-RoPE (forward_qwen35.cpp). The multi-token-prediction layers are not supported.
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  const std::string p = hp.arch + ".";
  auto need = [&](int v, const char* key) -> Status {
    if (v > 0) return Status::ok();
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing or zero metadata key '%s%s'", file.name().c_str(),
                                                 p.c_str(), key));
  };
  OX_TRY(need(hp.ssm_d_conv, "ssm.conv_kernel"));
  OX_TRY(need(hp.ssm_d_inner, "ssm.inner_size"));
  OX_TRY(need(hp.ssm_d_state, "ssm.state_size"));
  OX_TRY(need(hp.ssm_dt_rank, "ssm.time_step_rank"));
  OX_TRY(need(hp.ssm_n_group, "ssm.group_count"));
  // The state is S x S per value head: llama.cpp needs key and value heads of one size, too.
  if (hp.ssm_d_inner != hp.ssm_dt_rank * hp.ssm_d_state || hp.ssm_dt_rank % hp.ssm_n_group != 0) {
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: '%sssm.inner_size' %d must be '%sssm.time_step_rank' %d x '%sssm.state_size' %d, and the "
                        "value heads a multiple of '%sssm.group_count' %d",
                        file.name().c_str(), p.c_str(), hp.ssm_d_inner, p.c_str(), hp.ssm_dt_rank, p.c_str(),
                        hp.ssm_d_state, p.c_str(), hp.ssm_n_group));
  }
  if (hp.head_dim_k != hp.head_dim_v) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: key and value heads differ (%d, %d)", file.name().c_str(),
                                                 hp.head_dim_k, hp.head_dim_v));
  }
  if (file.find(p + "nextn_predict_layers") != nullptr) {
    OX_ASSIGN_OR_RETURN(const uint32_t n_mtp, file.get_u32(p + "nextn_predict_layers"));
    if (n_mtp > 0) {
      return error(ErrorCode::kUnsupported, strfmt("%s: multi-token-prediction layers ('%snextn_predict_layers' %u) "
                                                   "are not supported",
                                                   file.name().c_str(), p.c_str(), n_mtp));
    }
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef qwen35{
    .name = "qwen35",
    .spec = {.rope_style = RopeStyle::kNeox,
             .recurrent = Recurrent::kDeltaNet,
             .hybrid = true,
             .attention_interval = 4},
    .configure = configure,
    .forward = forward_qwen35,
    .synth_keys = {{"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 256},
                   {"ssm.state_size", SynthKey::kU32, 64},
                   {"ssm.time_step_rank", SynthKey::kU32, 4},
                   {"ssm.group_count", SynthKey::kU32, 2},
                   {"full_attention_interval", SynthKey::kU32, 2},
                   {"rope.dimension_count", SynthKey::kU32, 32},
                   {"rope.dimension_sections", SynthKey::kU32List, 0, "5,5,6,0"}},
};

}  // namespace ox::archs
