// Rope scaling as llama.cpp's context applies it: from rope.scaling.type and the YaRN settings of
// the spec, the ext_factor / attn_factor / beta / n_ctx_orig of every layer's RopeParams.
#pragma once

#include "core/model/arch_spec.h"
#include "core/model/hparams.h"
#include "core/ops/ops.h"

namespace ox {

// Sets r's YaRN fields (freq_base and freq_scale already set): YaRN on (ext_factor 1) for
// rope.scaling.type yarn, its magnitude pre-divided so that rope's 1 + 0.1 ln(factor) leaves
// mscale(factor, 1) / mscale(factor, yarn_log_mul), and every type's rope.scaling.attn_factor.
void apply_rope_scaling(const ArchSpec& s, const HParams& hp, RopeParams& r);

}  // namespace ox
