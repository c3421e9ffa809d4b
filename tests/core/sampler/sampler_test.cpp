// Sampler: each stage checked on small hand-made distributions, with expected sets and
// frequencies derived by hand / from a float64 softmax written here.
#include "core/sampler/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace ox {
namespace {

SamplerParams plain(float temperature) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  p.seed = 1234;
  return p;
}

TEST(Sampler, GreedyIsArgmaxWithLowestIdOnTies) {
  Sampler s(plain(0.0f));
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.sample(logits, {}), 1);
  EXPECT_EQ(argmax(logits), 1);
}

TEST(Sampler, TopK1IsGreedyAtAnyTemperature) {
  SamplerParams p = plain(5.0f);
  p.top_k = 1;
  Sampler s(p);
  const std::vector<float> logits = {0.1f, 0.3f, 0.2f};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(logits, {}), 1);
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDiffers) {
  const std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.05f, 0.95f, 1.02f};
  auto run = [&](uint64_t seed) {
    SamplerParams p = plain(1.0f);
    p.seed = seed;
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(s.sample(logits, {}));
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(Sampler, FrequenciesFollowSoftmaxAtTemperature) {
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
  const double t = 0.7;
  // float64 reference: p_i = exp(l_i / t) / sum_j exp(l_j / t)
  double z = 0;
  for (float l : logits) z += std::exp(l / t);
  Sampler s(plain(static_cast<float>(t)));
  std::map<int32_t, int> counts;
  const int n = 200000;
  for (int i = 0; i < n; ++i) counts[s.sample(logits, {})]++;
  for (int id = 0; id < 3; ++id) {
    const double expected = std::exp(logits[id] / t) / z;
    // 5 standard deviations of a binomial proportion.
    const double sd = std::sqrt(expected * (1 - expected) / n);
    EXPECT_NEAR(counts[id] / static_cast<double>(n), expected, 5 * sd) << "token " << id;
  }
}

TEST(Sampler, TopPKeepsSmallestPrefixReachingP) {
  // probabilities 0.5, 0.25, 0.125, 0.125 (logits = log p): top_p 0.7 keeps {0, 1}.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)};
  SamplerParams p = plain(1.0f);
  p.top_p = 0.7f;
  Sampler s(p);
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(s.sample(logits, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, MinPDropsTokensBelowFractionOfTop) {
  // p = 0.6, 0.3, 0.1: min_p 0.4 keeps tokens with p >= 0.24 -> {0, 1}.
  const std::vector<float> logits = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplerParams p = plain(1.0f);
  p.min_p = 0.4f;
  Sampler s(p);
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(s.sample(logits, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  // Token 0: 3.0 / 2 = 1.5 < token 1's 2.0 -> greedy picks 1.
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p);
  EXPECT_EQ(s.sample(std::vector<float>{3.0f, 2.0f}, std::vector<int32_t>{0}), 1);
  // Negative logits: -1 * 2 = -2 < -1.5 -> token 1 wins.
  EXPECT_EQ(s.sample(std::vector<float>{-1.0f, -1.5f}, std::vector<int32_t>{0}), 1);
  // Outside the window (repeat_last_n 1 sees only the last token): no penalty on token 0.
  p.repeat_last_n = 1;
  Sampler windowed(p);
  EXPECT_EQ(windowed.sample(std::vector<float>{3.0f, 2.0f}, std::vector<int32_t>{0, 1}), 0);
}

TEST(Rng, KnownXoshiroSequenceIsStable) {
  // Deterministic across platforms: two generators with one seed agree, and values are in [0,1).
  Rng a(7), b(7);
  for (int i = 0; i < 1000; ++i) {
    const double u = a.uniform();
    EXPECT_EQ(u, b.uniform());
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace ox
