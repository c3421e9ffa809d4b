// The one place request fields become sampler settings: when core/sampler's SamplerParams changes,
// only sampling_params.cpp follows it.
#pragma once

#include "core/sampler/sampler.h"
#include "native/server/params.h"

namespace ox::server {

// Fields the request left out take llama-server's defaults (SamplerParams' own: temperature 0.8,
// top_k 40, top_p 0.95, min_p 0.05, no repetition penalty, a random seed).
SamplerParams to_sampler_params(const SamplingFields& fields);

}  // namespace ox::server
