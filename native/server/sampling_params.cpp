// Request sampling fields -> SamplerParams.
#include "native/server/sampling_params.h"

namespace ox::server {

SamplerParams to_sampler_params(const SamplingFields& f) {
  SamplerParams p;
  if (f.temperature) p.temperature = static_cast<float>(*f.temperature);
  if (f.top_p) p.top_p = static_cast<float>(*f.top_p);
  if (f.min_p) p.min_p = static_cast<float>(*f.min_p);
  if (f.top_k) p.top_k = static_cast<int>(*f.top_k);
  if (f.repeat_penalty) p.repeat_penalty = static_cast<float>(*f.repeat_penalty);
  if (f.repeat_last_n) p.repeat_last_n = static_cast<int>(*f.repeat_last_n);
  // llama.cpp's seeds are 32-bit; -1 (LLAMA_DEFAULT_SEED) draws one at random.
  if (f.seed) p.seed = *f.seed < 0 ? 0xFFFFFFFFu : static_cast<uint64_t>(*f.seed);
  return p;
}

}  // namespace ox::server
