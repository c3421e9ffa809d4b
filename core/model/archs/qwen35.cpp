// Qwen3.5: a hybrid of gated delta net layers (linear attention with a per-head matrix state, a
// causal convolution over q k v, a gated RMSNorm) and, every full_attention_interval-th layer
// (default 4), attention whose q projection also yields a sigmoid output gate, with q/k RMSNorm and
// interleaved M-RoPE (forward_qwen35.cpp). The multi-token-prediction blocks (attention blocks with
// nextn.* tensors) are checked and not run; llama.cpp requires their tensors (ArchSpec::nextn).
// Its configure hook serves qwen35moe too (archs/qwen35moe.cpp).
#include "core/model/arch_registry.h"
#include "core/model/moe.h"
#include "core/model/recurrent.h"
#include "core/model/tensor_plan.h"

namespace ox::archs {
namespace {

// llama.cpp reads <arch>.attention.recurrent_layers (one bool per layer) in place of the interval
// where a file has it: it must say what the interval says, the one pattern run here.
Status check_recurrent_layers(const gguf::GgufFile& file, const HParams& hp, const ArchSpec& spec) {
  const std::string key = hp.arch + ".attention.recurrent_layers";
  const gguf::Value* v = file.find(key);
  if (v == nullptr) return Status::ok();
  const bool flags = v->type == gguf::ValueType::ARRAY &&
                     (v->elem_type == gguf::ValueType::BOOL || gguf::Value{.type = v->elem_type}.is_integer());
  const int n_block = hp.n_layer + hp.n_layer_nextn;  // the multi-token-prediction blocks' flags are not read
  if (!flags || v->count != static_cast<uint64_t>(n_block)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' must hold one bool per block (%d)", file.name().c_str(),
                                                 key.c_str(), n_block));
  }
  for (int l = 0; l < hp.n_layer; ++l) {
    const bool recurrent = v->elem_type == gguf::ValueType::BOOL ? v->raw[l] != 0 : v->integer_at(l) != 0;
    if (recurrent != is_recurrent_layer(spec, hp, l)) {
      return error(ErrorCode::kUnsupported,
                   strfmt("%s: '%s' makes layer %d %s, which the full attention interval (%d) does not: layer "
                          "patterns other than the interval's are not supported",
                          file.name().c_str(), key.c_str(), l, recurrent ? "recurrent" : "attend",
                          hp.full_attention_interval > 0 ? hp.full_attention_interval : spec.attention_interval));
    }
  }
  return Status::ok();
}

// qwen35moe: routed experts (expert_count, expert_used_count) as wide as expert_feed_forward_length
// (feed_forward_length / expert_used_count if absent) and a shared expert on every layer.
Status check_experts(const gguf::GgufFile& file, const HParams& hp, const ArchSpec& spec) {
  const std::string p = hp.arch + ".";
  if (hp.n_expert <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing or zero metadata key '%sexpert_count'",
                                                 file.name().c_str(), p.c_str()));
  }
  if (expert_ff(spec, hp) <= 0 || shared_ff(spec, hp) <= 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s%s'", file.name().c_str(), p.c_str(),
                                                 expert_ff(spec, hp) <= 0 ? "expert_feed_forward_length"
                                                                          : "expert_shared_feed_forward_length"));
  }
  return Status::ok();
}

}  // namespace

// qwen35's and qwen35moe's checks of the file (qwen35moe.cpp declares it).
Status configure_qwen35(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec) {
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
  OX_TRY(check_recurrent_layers(file, hp, spec));
  OX_TRY(spec.moe ? check_experts(file, hp, spec) : need(hp.n_ff, "feed_forward_length"));
  return Status::ok();
}

extern const ArchDef qwen35{
    .name = "qwen35",
    .spec = {.rope_style = RopeStyle::kNeox,
             .recurrent = Recurrent::kDeltaNet,
             .hybrid = true,
             .attention_interval = 4,
             .nextn = {.on = true}},
    .configure = configure_qwen35,
    .forward = forward_qwen35,
    .synth_keys = {{"ssm.conv_kernel", SynthKey::kU32, 4},
                   {"ssm.inner_size", SynthKey::kU32, 256},
                   {"ssm.state_size", SynthKey::kU32, 64},
                   {"ssm.time_step_rank", SynthKey::kU32, 4},
                   {"ssm.group_count", SynthKey::kU32, 2},
                   {"full_attention_interval", SynthKey::kU32, 2},
                   {"rope.dimension_count", SynthKey::kU32, 32},
                   {"rope.dimension_sections", SynthKey::kU32List, 0, "5,5,6,0"},
                   // qwen35@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
};

}  // namespace ox::archs
