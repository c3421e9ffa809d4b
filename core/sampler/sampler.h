// Sampler: turns next-token logits into a token id with llama.cpp's sampler chain: logit bias,
// then the stages in params.samplers order (default penalties;dry;top_n_sigma;top_k;typ_p;top_p;
// min_p;xtc;temperature) and a draw, or with mirostat 1/2 temperature and Mirostat. A grammar
// (TokenConstraint) is applied as llama.cpp's common_sampler_sample: the chain samples first and
// only if the grammar rejects that token is the chain run again over the grammar's candidates.
// The random generator is our own (rng.h), so a seed gives the same tokens natively and in wasm.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/constraint.h"
#include "core/sampler/params.h"
#include "core/sampler/rng.h"
#include "core/sampler/stages.h"

namespace ox {

struct TokenProb {
  int32_t id;
  float p;
  float logp;  // log p computed as logit - log-sum-exp (exact where p underflows a float)
};

// For n_probs > 0, as llama-server's n_probs (post_sampling_probs off): probabilities from the
// softmax of the raw logits, before any stage.
struct TokenProbs {
  int32_t token = -1;  // the chosen token
  float p = 0;         // its probability
  float logp = 0;      // its log probability (logprobs)
  std::vector<TokenProb> top;  // the n_probs most likely tokens, most likely first
};

class Sampler {
 public:
  // dry_breakers: DRY's sequence breakers as token sequences (build_dry_breakers over the
  // vocabulary); parameters are checked with validate() and sample() returns its error.
  explicit Sampler(const SamplerParams& params, DryBreakers dry_breakers = {});

  const SamplerParams& params() const { return params_; }
  uint64_t seed() const { return seed_; }  // the seed in use (drawn when params.seed is random)

  // The grammar, not owned (nullptr: none). It must outlive the sampler's use.
  void set_constraint(TokenConstraint* constraint) { constraint_ = constraint; }

  // history: tokens so far (prompt and generated), for the penalties and DRY.
  Result<int32_t> sample(std::span<const float> logits, std::span<const int32_t> history);
  // The token was chosen: the grammar advances (its error if it did not allow it).
  Status accept(int32_t token);
  // Back to the seed's first draws, Mirostat's mu to 2 * tau, the grammar to its start.
  void reset();

  // The probabilities of the last sample() (empty when n_probs is 0).
  const TokenProbs& probs() const { return probs_; }

 private:
  // One run of the chain over candidates_[0, n): the chosen id, or -1 when no token is possible.
  int32_t run_chain(size_t n, std::span<const int32_t> history);
  void fill(std::span<const float> logits);
  void compute_probs(std::span<const float> logits, int32_t token);

  SamplerParams params_;
  Status valid_;
  DryBreakers dry_breakers_;
  uint64_t seed_;
  Rng dist_rng_;  // the draw (and Mirostat's)
  Rng xtc_rng_;   // XTC's own stream, as llama.cpp gives XTC its own generator
  float mirostat_mu_;
  TokenConstraint* constraint_ = nullptr;
  std::vector<TokenCandidate> candidates_;  // reused between calls
  TokenProbs probs_;
};

// Index of the largest value (lowest index among equals).
int32_t argmax(std::span<const float> values);

}  // namespace ox
