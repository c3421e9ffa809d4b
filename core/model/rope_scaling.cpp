// apply_rope_scaling: llama_context's yarn_ext_factor / yarn_attn_factor rules (llama-context.cpp).
#include "core/model/rope_scaling.h"

#include <cmath>

namespace ox {
namespace {

// HF's yarn_get_mscale: 1 + 0.1 * mscale * ln(scale) above scale 1.
float yarn_mscale(float scale, float mscale) { return scale <= 1.0f ? 1.0f : 0.1f * mscale * std::log(scale) + 1.0f; }

}  // namespace

void apply_rope_scaling(const ArchSpec& s, const HParams& hp, RopeParams& r) {
  r.beta_fast = s.yarn_beta_fast;
  r.beta_slow = s.yarn_beta_slow;
  r.n_ctx_orig = hp.n_ctx_orig_yarn;
  r.ext_factor = hp.rope_scaling == RopeScalingType::kYarn ? 1.0f : 0.0f;
  float attn_factor = 1.0f;
  if (r.ext_factor != 0.0f) {
    // The global scaling's factor, also for window layers with a scaling of their own (as llama.cpp).
    const float factor = 1.0f / hp.rope_freq_scale;
    attn_factor = s.yarn_log_mul != 0.0f ? yarn_mscale(factor, 1.0f) / yarn_mscale(factor, s.yarn_log_mul)
                                         : yarn_mscale(factor, 1.0f);
    // rope() multiplies by 1 + 0.1 ln(1 / freq_scale) again under YaRN: cancelled here, as llama.cpp does.
    attn_factor *= 1.0f / (1.0f + 0.1f * std::log(factor));
  }
  r.attn_factor = attn_factor * hp.rope_attn_factor;
}

}  // namespace ox
