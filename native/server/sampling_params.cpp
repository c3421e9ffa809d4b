// Request sampling fields -> SamplerParams: params.cpp reads every field through core/sampler's
// registry (json_params.h), so the request already holds them.
#include "native/server/sampling_params.h"

namespace ox::server {

SamplerParams to_sampler_params(const CompletionRequest& request) { return request.sampling; }

}  // namespace ox::server
