// Multi-head latent attention (deepseek2): the forward pass of the architectures that use it
// (forward_deepseek2.cpp) and the working memory it needs beyond the generic decoder's.
#pragma once

#include <cstdint>
#include <span>

#include "core/model/model.h"

namespace ox {

// Floats per batch token the latent attention carves from ForwardState::mixer (0 without ArchSpec::mla).
int64_t mla_scratch_floats(const ArchSpec& s, const HParams& hp);

// The forward pass of deepseek2 (forward_deepseek2.cpp).
void forward_deepseek2(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);

}  // namespace ox
