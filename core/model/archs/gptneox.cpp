// GPT-NeoX (Pythia): partial NEOX rotary positions, LayerNorm, fused qkv, GELU feed-forward,
// biases everywhere; attention and feed-forward in parallel from their own norms when
// gptneox.use_parallel_residual is set (the default), sequential otherwise.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams&, ArchSpec& s) {
  OX_ASSIGN_OR_RETURN(const bool parallel, file.get_bool_or("gptneox.use_parallel_residual", true));
  s.residual = parallel ? Residual::kParallelTwoNorms : Residual::kSequential;
  return Status::ok();
}

}  // namespace

extern const ArchDef gptneox{
    .name = "gptneox",
    .spec = {.norm = NormKind::kLayer,
             .rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGelu,
             .residual = Residual::kParallelTwoNorms,
             .bias = {.qkv = Has::kYes, .attn_out = Has::kYes, .ffn = Has::kYes, .norm = Has::kYes},
             .fused_qkv = true,
             .qkv_either = false},
    .configure = configure,
    .synth_keys = {{"rope.dimension_count", SynthKey::kU32, 8}, {"use_parallel_residual", SynthKey::kBool, 1}},
};

}  // namespace ox::archs
