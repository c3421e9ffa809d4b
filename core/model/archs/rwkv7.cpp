// RWKV-7 ("Goose"): an attention-free recurrent model. LayerNorms with biases (one after the
// embedding too); each layer a time mix around the wkv7 state update and a channel mix, both fed by
// a token shift (forward_rwkv7.cpp).
#include "core/model/arch_registry.h"
#include "core/model/recurrent.h"

namespace ox::archs {
namespace {

Status configure(const gguf::GgufFile& file, const HParams& hp, ArchSpec&) {
  const char* name = file.name().c_str();
  if (hp.wkv_head_size <= 0 || hp.n_embd % hp.wkv_head_size != 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s.wkv.head_size' (%d) must divide embedding_length (%d)", name,
                                                 hp.arch.c_str(), hp.wkv_head_size, hp.n_embd));
  }
  if (hp.token_shift_count != 2) {  // llama.cpp asserts the same
    return error(ErrorCode::kUnsupported, strfmt("%s: '%s.token_shift_count' is %d; RWKV-7 runs with 2", name,
                                                 hp.arch.c_str(), hp.token_shift_count));
  }
  if (hp.n_lora_decay <= 0 || hp.n_lora_iclr <= 0 || hp.n_lora_value_res_mix <= 0 || hp.n_lora_gate <= 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: the low-rank sizes '%s.attention.{decay,iclr,value_residual_mix,gate}_lora_rank' must "
                        "all be positive",
                        name, hp.arch.c_str()));
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef rwkv7{
    .name = "rwkv7",
    .spec = {.norm = NormKind::kLayer,
             .bias = {.norm = Has::kYes},
             .output = Has::kYes,
             .recurrent = Recurrent::kRwkv7},
    .configure = configure,
    .forward = forward_rwkv7,
    .synth_keys = {{"wkv.head_size", SynthKey::kU32, 64},
                   {"attention.decay_lora_rank", SynthKey::kU32, 32},
                   {"attention.iclr_lora_rank", SynthKey::kU32, 32},
                   {"attention.value_residual_mix_lora_rank", SynthKey::kU32, 16},
                   {"attention.gate_lora_rank", SynthKey::kU32, 64},
                   {"token_shift_count", SynthKey::kU32, 2}},
};

}  // namespace ox::archs
