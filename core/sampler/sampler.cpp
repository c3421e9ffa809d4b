// Sampler: the chain over a reused candidate list, the grammar's resampling and n_probs.
#include "core/sampler/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "core/sampler/registry.h"

namespace ox {
namespace {

constexpr uint64_t kXtcStream = 0x5854435F73747265ull;  // "XTC_stre": XTC's seed differs from the draw's

uint64_t resolve_seed(uint64_t seed) {
  if (seed != kRandomSeed) return seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

int32_t argmax(std::span<const float> values) {
  int32_t best = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] > values[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best;
}

Sampler::Sampler(const SamplerParams& params, DryBreakers dry_breakers)
    : params_(params),
      valid_(validate(params)),
      dry_breakers_(std::move(dry_breakers)),
      seed_(resolve_seed(params.seed)),
      dist_rng_(seed_),
      xtc_rng_(seed_ ^ kXtcStream),
      mirostat_mu_(2.0f * params.mirostat_tau) {}

void Sampler::reset() {
  dist_rng_ = Rng(seed_);
  xtc_rng_ = Rng(seed_ ^ kXtcStream);
  mirostat_mu_ = 2.0f * params_.mirostat_tau;
  if (constraint_ != nullptr) constraint_->reset();
}

void Sampler::fill(std::span<const float> logits) {
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
}

int32_t Sampler::run_chain(size_t n, std::span<const int32_t> history) {
  Candidates c{candidates_.data(), n, false, -1};
  apply_logit_bias(c, params_.logit_bias);
  if (params_.mirostat == 0) {
    ChainState state{&params_, history, &xtc_rng_, &dry_breakers_};
    for (Stage s : params_.samplers) stage_def(s).apply(c, state);
    select_dist(c, dist_rng_);
  } else {
    apply_temperature(c, params_.temperature, 0.0f, 1.0f);
    const int32_t n_vocab = static_cast<int32_t>(candidates_.size());
    if (params_.mirostat == 1) {
      select_mirostat(c, params_.mirostat_tau, params_.mirostat_eta, /*m=*/100, n_vocab, &mirostat_mu_, dist_rng_);
    } else {
      select_mirostat_v2(c, params_.mirostat_tau, params_.mirostat_eta, &mirostat_mu_, dist_rng_);
    }
  }
  if (c.selected < 0 || c.data[c.selected].logit == -INFINITY) return -1;
  return c.data[c.selected].id;
}

Result<int32_t> Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  OX_TRY(valid_);
  if (logits.empty()) return error(ErrorCode::kInvalidArgument, "sampling from an empty vocabulary");
  fill(logits);
  int32_t id = run_chain(candidates_.size(), history);
  if (constraint_ != nullptr && id >= 0) {
    // Grammar-based rejection sampling: keep the token if the grammar allows it.
    TokenCandidate one{id, 1.0f, 0.0f};
    constraint_->apply(std::span<TokenCandidate>(&one, 1));
    if (one.logit == -INFINITY) id = -1;
  }
  if (constraint_ != nullptr && id < 0) {
    fill(logits);
    constraint_->apply(candidates_);
    id = run_chain(candidates_.size(), history);
  }
  if (id < 0 && constraint_ != nullptr && !constraint_->why_nothing_allowed().empty()) {
    return error(ErrorCode::kInvalidArgument, "no token is possible: " + constraint_->why_nothing_allowed());
  }
  if (id < 0) {
    return error(ErrorCode::kInvalidArgument,
                 constraint_ != nullptr ? "no token is possible: the grammar and the logit biases rule out all of them"
                                        : "no token is possible: the logit biases rule out all of them");
  }
  if (params_.n_probs > 0) {
    compute_probs(logits, id);
  }
  return id;
}

// llama-server's get_token_probabilities: softmax over the raw logits, top n_probs by logit. The
// log probabilities are logit - max - log(sum exp(logit - max)), in double.
void Sampler::compute_probs(std::span<const float> logits, int32_t token) {
  const double max_l = logits[static_cast<size_t>(argmax(logits))];
  double sum = 0;
  for (float l : logits) sum += std::exp(l - max_l);
  const double log_sum = std::log(sum);
  auto prob = [&](float l) { return static_cast<float>(std::exp(l - max_l) / sum); };
  auto logp = [&](float l) { return static_cast<float>(l - max_l - log_sum); };
  const size_t n_top = std::min(logits.size(), static_cast<size_t>(params_.n_probs));
  fill(logits);
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n_top), candidates_.end(),
                    logit_order);
  probs_.top.resize(n_top);
  for (size_t i = 0; i < n_top; ++i) {
    probs_.top[i] = {candidates_[i].id, prob(candidates_[i].logit), logp(candidates_[i].logit)};
  }
  probs_.token = token;
  const float chosen = logits[static_cast<size_t>(token)];
  probs_.p = prob(chosen);
  probs_.logp = logp(chosen);
}

Status Sampler::accept(int32_t token) {
  if (constraint_ != nullptr) OX_TRY(constraint_->accept(token));
  return Status::ok();
}

}  // namespace ox
