// Sampler implementation: each stage narrows `candidates_`, sorted by logit where needed.
#include "core/sampler/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace ox {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

int32_t argmax(std::span<const float> values) {
  int32_t best = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] > values[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best;
}

Sampler::Sampler(const SamplerParams& params) : params_(params), seed_(params.seed), rng_(0) {
  if (seed_ == 0xFFFFFFFFu) {
    std::random_device rd;
    seed_ = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  rng_ = Rng(seed_);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  const int32_t n_vocab = static_cast<int32_t>(logits.size());
  candidates_.resize(logits.size());
  for (int32_t i = 0; i < n_vocab; ++i) candidates_[i] = {i, logits[i]};

  // Repetition penalty: shrink the logits of recently seen tokens (divide positive, multiply negative).
  if (params_.repeat_penalty != 1.0f && params_.repeat_last_n != 0) {
    const size_t window = params_.repeat_last_n < 0 ? history.size()
                                                    : std::min(history.size(), static_cast<size_t>(params_.repeat_last_n));
    std::vector<bool> seen(logits.size(), false);
    for (size_t i = history.size() - window; i < history.size(); ++i) {
      const int32_t id = history[i];
      if (id < 0 || id >= n_vocab || seen[id]) continue;
      seen[id] = true;
      float& l = candidates_[id].logit;
      l = l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty;
    }
  }

  if (params_.temperature <= 0.0f) {
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab; ++i) {
      if (candidates_[i].logit > candidates_[best].logit) best = i;
    }
    return candidates_[best].id;
  }

  // Sort by logit, descending; ties by id so the order is the same on every platform.
  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  size_t n = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < n) {
    std::partial_sort(candidates_.begin(), candidates_.begin() + params_.top_k, candidates_.end(), by_logit);
    n = static_cast<size_t>(params_.top_k);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }

  // Probabilities of the survivors (softmax at temperature 1, as llama.cpp's top-p/min-p see them).
  auto softmax_into = [&](size_t count, float temperature) {
    probs_.resize(count);
    const float max_l = candidates_[0].logit;
    double sum = 0;
    for (size_t i = 0; i < count; ++i) {
      probs_[i] = std::exp((candidates_[i].logit - max_l) / temperature);
      sum += probs_[i];
    }
    for (size_t i = 0; i < count; ++i) probs_[i] = static_cast<float>(probs_[i] / sum);
  };

  if (params_.top_p < 1.0f) {
    softmax_into(n, 1.0f);
    double cumulative = 0;
    size_t keep = n;
    for (size_t i = 0; i < n; ++i) {
      cumulative += probs_[i];
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    n = keep;
  }
  if (params_.min_p > 0.0f && n > 1) {
    // Keep tokens whose probability is at least min_p times the top one's: p_i/p_0 = exp(l_i - l_0).
    const float threshold = candidates_[0].logit + std::log(params_.min_p);
    size_t keep = 1;
    while (keep < n && candidates_[keep].logit >= threshold) ++keep;
    n = keep;
  }

  softmax_into(n, params_.temperature);
  const double r = rng_.uniform();
  double cumulative = 0;
  for (size_t i = 0; i < n; ++i) {
    cumulative += probs_[i];
    if (r < cumulative) return candidates_[i].id;
  }
  return candidates_[n - 1].id;
}

}  // namespace ox
