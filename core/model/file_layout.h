// read_file_layout: which of two layouts llama.cpp's loader takes a file has, where an architecture
// takes either (ArchSpec::qkv_either, MoeSpec::gate_up_either). Read once, before the tensor plan,
// so that the plan, the loader and the forward pass all follow the spec and never a tensor's presence.
#pragma once

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/model/arch_spec.h"
#include "core/model/hparams.h"

namespace ox {

// Sets spec.fused_qkv (attn_qkv or attn_q/k/v) and spec.experts.fused_gate_up (ffn_gate_up_exps or
// ffn_gate_exps + ffn_up_exps) from the file's first layer that has the projections. llama.cpp
// decides per layer; a file mixing the layouts is refused, naming the first layer that differs.
Status read_file_layout(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec);

}  // namespace ox
