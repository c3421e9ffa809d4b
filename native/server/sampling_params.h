// The one place request fields become sampler settings: when core/sampler's SamplerParams changes,
// only sampling_params.cpp follows it.
#pragma once

#include "core/sampler/sampler.h"
#include "native/server/params.h"

namespace ox::server {

// The request's sampler fields (parsed and validated by params.cpp through core/sampler's registry;
// those left out take llama-server's defaults, SamplerParams' own).
SamplerParams to_sampler_params(const CompletionRequest& request);

}  // namespace ox::server
