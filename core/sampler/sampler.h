// Sampler: turns next-token logits into a token id. The chain follows llama.cpp's default order:
// repetition penalty -> top-k -> top-p -> min-p -> temperature -> random draw.
// Greedy (argmax, ties to the lower id) when temperature <= 0. The random generator is our own
// (splitmix64 + xoshiro256**), so a seed gives the same tokens natively and in wasm.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ox {

struct SamplerParams {
  float temperature = 0.8f;
  int top_k = 40;            // <= 0: disabled
  float top_p = 0.95f;       // >= 1: disabled
  float min_p = 0.05f;       // <= 0: disabled
  float repeat_penalty = 1.0f;  // 1: disabled
  int repeat_last_n = 64;    // how many recent tokens the penalty looks at
  uint64_t seed = 0xFFFFFFFFu;  // 0xFFFFFFFF (llama.cpp's LLAMA_DEFAULT_SEED): pick one at random
};

// Deterministic 64-bit generator (xoshiro256**), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();  // [0, 1) with 53 random bits

 private:
  uint64_t s_[4];
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params);

  const SamplerParams& params() const { return params_; }
  uint64_t seed() const { return seed_; }

  // history: tokens so far (prompt and generated), for the repetition penalty.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  SamplerParams params_;
  uint64_t seed_;
  Rng rng_;
  std::vector<Candidate> candidates_;  // reused between calls
  std::vector<float> probs_;
};

// Index of the largest value (lowest index among equals).
int32_t argmax(std::span<const float> values);

}  // namespace ox
