// SamplerParams: every knob of llama.cpp's sampler chain (common_params_sampling), with its
// defaults. The registry (registry.h) describes each field once: CLI spelling, JSON key, range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ox {

// The stages `--samplers` orders (llama.cpp's common_sampler_type, less infill and adaptive_p).
enum class Stage : uint8_t {
  kPenalties,
  kDry,
  kTopNSigma,
  kTopK,
  kTypicalP,
  kTopP,
  kMinP,
  kXtc,
  kTemperature,
};

struct LogitBias {
  int32_t token;
  float bias;  // added to the logit; -infinity bans the token
};

// llama.cpp's default order (common.h): penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature.
std::vector<Stage> default_stages();

inline constexpr uint64_t kRandomSeed = 0xFFFFFFFFu;  // llama.cpp's LLAMA_DEFAULT_SEED: draw one at random

struct SamplerParams {
  uint64_t seed = kRandomSeed;
  float temperature = 0.8f;      // <= 0: greedy (the temperature stage keeps only the largest logit)
  float dynatemp_range = 0.0f;   // > 0: temperature in [temp - range, temp + range] from the entropy
  float dynatemp_exponent = 1.0f;
  int top_k = 40;                // <= 0: disabled
  float top_p = 0.95f;           // 1: disabled
  float min_p = 0.05f;           // 0: disabled
  float typical_p = 1.0f;        // 1: disabled
  float top_n_sigma = -1.0f;     // <= 0: disabled
  float xtc_probability = 0.0f;  // 0: disabled
  float xtc_threshold = 0.1f;    // > 0.5: disabled
  int repeat_last_n = 64;        // tokens the penalties look back over (0: disabled, -1: all of them)
  float repeat_penalty = 1.0f;   // 1: disabled
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  float dry_multiplier = 0.0f;   // 0: disabled
  float dry_base = 1.75f;
  int dry_allowed_length = 2;
  int dry_penalty_last_n = 64;   // 0: disabled, -1: all of the history
  std::vector<std::string> dry_sequence_breakers = {"\n", ":", "\"", "*"};
  int mirostat = 0;              // 0: off, 1: Mirostat, 2: Mirostat 2.0 (replace the stages after logit bias)
  float mirostat_tau = 5.0f;     // target entropy (--mirostat-ent)
  float mirostat_eta = 0.1f;     // learning rate (--mirostat-lr)
  int min_keep = 0;              // truncating stages keep at least this many candidates
  int n_probs = 0;               // > 0: report the chosen token's and the top n_probs probabilities
  std::vector<LogitBias> logit_bias;
  std::vector<Stage> samplers = default_stages();
};

}  // namespace ox
