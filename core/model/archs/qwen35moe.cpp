// Qwen3.5-MoE (Qwen3.5-35B-A3B, 122B-A10B, 397B-A17B): Qwen3.5's hybrid of gated delta net and gated
// attention layers (forward_qwen35.cpp), each ending in experts instead of a dense SwiGLU: softmax
// routing with the chosen weights renormalised, plus a shared expert on every token gated by
// sigmoid(h . ffn_gate_inp_shexp) (llama.cpp's src/models/qwen35moe.cpp). Experts are
// expert_feed_forward_length wide (feed_forward_length / expert_used_count if absent), the shared
// expert expert_shared_feed_forward_length (feed_forward_length if absent). Multi-token-prediction
// blocks are checked and not run (ArchSpec::nextn).
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {

Status configure_qwen35(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec);  // archs/qwen35.cpp

extern const ArchDef qwen35moe{
    .name = "qwen35moe",
    .spec = {.rope_style = RopeStyle::kNeox,
             .moe = true,
             .experts = {.ff = ExpertFf::kNffOverUsed, .shared = SharedFf::kShexpOrNff, .shared_gate = true, .gate_up_either = true},
             .recurrent = Recurrent::kDeltaNet,
             .hybrid = true,
             .attention_interval = 4,
             .nextn = {.on = true, .gate_up_exps_optional = true}},
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
                   {"expert_count", SynthKey::kU32, 4},
                   {"expert_used_count", SynthKey::kU32, 2},
                   {"expert_feed_forward_length", SynthKey::kU32, 128},
                   {"expert_shared_feed_forward_length", SynthKey::kU32, 192},
                   // qwen35moe@mtp: one multi-token-prediction block after the trunk
                   {.key = "nextn_predict_layers", .value = 1, .variant = "mtp"}},
};

}  // namespace ox::archs
