// Sampler: the whole chain on small hand-made distributions (greedy, seeds, frequencies against
// a float64 softmax written here, --samplers order, Mirostat, logit bias), the grammar applied
// as llama.cpp's common_sampler_sample, and n_probs.
#include "core/sampler/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/sampler/registry.h"

namespace ox {
namespace {

SamplerParams plain(float temperature) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 1234;
  return p;
}

int32_t sample_ok(Sampler& s, std::span<const float> logits, std::span<const int32_t> history = {}) {
  Result<int32_t> r = s.sample(logits, history);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : -1;
}

std::set<int32_t> seen_over(Sampler& s, const std::vector<float>& logits, int n) {
  std::set<int32_t> seen;
  for (int i = 0; i < n; ++i) seen.insert(sample_ok(s, logits));
  return seen;
}

TEST(Sampler, GreedyIsArgmaxWithLowestIdOnTies) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  Sampler s(plain(0.0f));
  EXPECT_EQ(sample_ok(s, logits), 1);
  SamplerParams with_defaults;  // top-k 40 etc. in front of temperature 0
  with_defaults.temperature = 0.0f;
  Sampler d(with_defaults);
  EXPECT_EQ(sample_ok(d, logits), 1);
  EXPECT_EQ(argmax(logits), 1);
}

TEST(Sampler, TopK1IsGreedyAtAnyTemperature) {
  SamplerParams p = plain(5.0f);
  p.top_k = 1;
  Sampler s(p);
  EXPECT_EQ(seen_over(s, {0.1f, 0.3f, 0.2f}, 50), (std::set<int32_t>{1}));
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDiffers) {
  const std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.05f, 0.95f, 1.02f};
  auto run = [&](uint64_t seed) {
    SamplerParams p = plain(1.0f);
    p.seed = seed;
    p.xtc_probability = 0.5f;  // the XTC stream too
    p.xtc_threshold = 0.1f;
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(sample_ok(s, logits));
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(Sampler, RandomSeedIsDrawnAndReported) {
  SamplerParams p = plain(1.0f);
  p.seed = kRandomSeed;
  Sampler a(p), b(p);
  EXPECT_NE(a.seed(), kRandomSeed);
  EXPECT_NE(a.seed(), b.seed());
}

TEST(Sampler, FrequenciesFollowSoftmaxAtTemperature) {
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
  const double t = 0.7;
  double z = 0;
  for (float l : logits) z += std::exp(l / t);
  Sampler s(plain(static_cast<float>(t)));
  std::map<int32_t, int> counts;
  const int n = 200000;
  for (int i = 0; i < n; ++i) counts[sample_ok(s, logits)]++;
  for (int id = 0; id < 3; ++id) {
    const double expected = std::exp(logits[id] / t) / z;
    const double sd = std::sqrt(expected * (1 - expected) / n);
    EXPECT_NEAR(counts[id] / static_cast<double>(n), expected, 5 * sd) << "token " << id;
  }
}

TEST(Sampler, DefaultOrderIsLlamaCpps) {
  // common_params_sampling::samplers in llama.cpp's common/common.h.
  EXPECT_EQ(samplers_text(default_stages()), "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature");
  EXPECT_EQ(sampler_chars(default_stages()), "edskypmxt");
  EXPECT_EQ(SamplerParams().samplers, default_stages());
}

TEST(Sampler, SamplersOrderChangesTheResult) {
  // logits 2, 1, 0; top_p 0.7 at temperature 1 keeps {0, 1}; after temperature 0.5 only {0}.
  const std::vector<float> logits = {2.0f, 1.0f, 0.0f};
  SamplerParams p = plain(0.5f);
  p.top_p = 0.7f;
  Result<std::vector<Stage>> top_p_first = parse_samplers("top_p;temperature");
  ASSERT_TRUE(top_p_first.ok());
  p.samplers = *top_p_first;
  Sampler a(p);
  EXPECT_EQ(seen_over(a, logits, 3000), (std::set<int32_t>{0, 1}));
  p.samplers = *parse_samplers("temperature;top_p");
  Sampler b(p);
  EXPECT_EQ(seen_over(b, logits, 3000), (std::set<int32_t>{0}));
  // Without a stage it does not run: no top_p at all.
  p.samplers = *parse_samplers("temperature");
  Sampler c(p);
  EXPECT_EQ(seen_over(c, logits, 3000), (std::set<int32_t>{0, 1, 2}));
}

TEST(Sampler, PenaltiesSeeTheHistory) {
  const std::vector<float> logits = {2.0f, 1.9f, 0.0f};
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p);
  const std::vector<int32_t> history = {0, 2};
  EXPECT_EQ(sample_ok(s, logits, history), 1);  // 2 / 2 = 1 < 1.9
  p.repeat_last_n = 1;                           // only token 2 is recent
  Sampler recent(p);
  EXPECT_EQ(sample_ok(recent, logits, history), 0);
}

TEST(Sampler, LogitBiasBansAndBoosts) {
  SamplerParams p = plain(0.0f);
  p.logit_bias = {{1, -INFINITY}, {2, 0.5f}};
  Sampler s(p);
  EXPECT_EQ(sample_ok(s, std::vector<float>{0.0f, 5.0f, 4.8f}), 2);
  p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}};
  Sampler none(p);
  EXPECT_FALSE(none.sample(std::vector<float>{0.0f, 1.0f}, {}).ok());
}

TEST(Sampler, MirostatReplacesTheStages) {
  // Mirostat 2 with tau tiny: mu starts near 0 so only the top token survives truncation.
  SamplerParams p = plain(1.0f);
  p.mirostat = 2;
  p.mirostat_tau = 0.01f;
  p.mirostat_eta = 0.0f;
  p.top_k = 1;  // ignored under Mirostat
  Sampler s(p);
  EXPECT_EQ(seen_over(s, {0.0f, 0.5f, 0.2f}, 200), (std::set<int32_t>{1}));
  p.mirostat = 1;
  p.mirostat_tau = 20.0f;  // mu = 40: k covers the vocabulary, every token can come
  Sampler v1(p);
  EXPECT_EQ(seen_over(v1, {0.0f, 0.5f, 0.2f}, 2000), (std::set<int32_t>{0, 1, 2}));
}

TEST(Sampler, InvalidParametersAreReportedBySample) {
  SamplerParams p = plain(1.0f);
  p.top_p = 2.0f;
  Sampler s(p);
  Result<int32_t> r = s.sample(std::vector<float>{0.0f, 1.0f}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--top-p"), std::string::npos);
}

// Allows only even ids; counts its calls.
class EvenOnly : public TokenConstraint {
 public:
  void apply(std::span<TokenCandidate> candidates) override {
    ++applies;
    last_apply_size = candidates.size();
    for (TokenCandidate& c : candidates) {
      if (c.id % 2 != 0) c.logit = -INFINITY;
    }
  }
  Status accept(int32_t token) override {
    if (token % 2 != 0) return error(ErrorCode::kInvalidArgument, "odd");
    accepted.push_back(token);
    return Status::ok();
  }
  bool can_end() const override { return true; }
  void reset() override { accepted.clear(); }
  int applies = 0;
  size_t last_apply_size = 0;
  std::vector<int32_t> accepted;
};

TEST(Sampler, GrammarChecksTheSampledTokenFirstThenResamples) {
  EvenOnly grammar;
  Sampler s(plain(0.0f));
  s.set_constraint(&grammar);
  // Greedy picks 2 (even): one apply over the single sampled token, no second pass.
  EXPECT_EQ(sample_ok(s, std::vector<float>{0.0f, 1.0f, 3.0f}), 2);
  EXPECT_EQ(grammar.applies, 1);
  EXPECT_EQ(grammar.last_apply_size, 1u);
  // Greedy picks 1 (odd): rejected, then the grammar sees all 4 candidates and 2 wins.
  grammar.applies = 0;
  EXPECT_EQ(sample_ok(s, std::vector<float>{0.0f, 5.0f, 3.0f, 4.0f}), 2);
  EXPECT_EQ(grammar.applies, 2);
  EXPECT_EQ(grammar.last_apply_size, 4u);
  EXPECT_TRUE(s.accept(2).is_ok());
  EXPECT_FALSE(s.accept(3).is_ok());
  EXPECT_EQ(grammar.accepted, std::vector<int32_t>{2});
  // Sampled tokens always satisfy the grammar at any temperature.
  Sampler hot(plain(3.0f));
  hot.set_constraint(&grammar);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(sample_ok(hot, std::vector<float>{1.0f, 2.0f, 0.5f, 1.5f, 0.0f}) % 2, 0);
  // Nothing allowed: an error, not a crash.
  Sampler only_odd(plain(1.0f));
  only_odd.set_constraint(&grammar);
  EXPECT_FALSE(only_odd.sample(std::vector<float>{-INFINITY, 1.0f}, {}).ok());
}

TEST(Sampler, NProbsAreTheRawSoftmax) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, -1.0f};
  SamplerParams p = plain(0.0f);
  p.n_probs = 2;
  p.logit_bias = {{1, -INFINITY}};  // the stages do not change the reported probabilities
  Sampler s(p);
  EXPECT_EQ(sample_ok(s, logits), 2);
  double z = 0;
  for (float l : logits) z += std::exp(static_cast<double>(l));
  const TokenProbs& probs = s.probs();
  EXPECT_EQ(probs.token, 2);
  EXPECT_NEAR(probs.p, std::exp(1.0) / z, 1e-6);
  ASSERT_EQ(probs.top.size(), 2u);
  EXPECT_EQ(probs.top[0].id, 1);
  EXPECT_NEAR(probs.top[0].p, std::exp(2.0) / z, 1e-6);
  EXPECT_EQ(probs.top[1].id, 2);
}

// Logprobs (JS and server `logprobs` / `top_logprobs`) are the log-softmax of the raw logits: here
// computed in long double by the test, over logits spread across 160 nats so that the least likely
// tokens' probabilities underflow a float (their log probabilities must still be exact).
TEST(Sampler, LogprobsAreTheLogSoftmaxOfTheLogits) {
  std::vector<float> logits(97);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = 40.0f - static_cast<float>((i * 37) % 97) * 1.65f;
  long double z = 0;
  const long double top = 40.0L;
  for (float l : logits) z += std::exp(static_cast<long double>(l) - top);
  auto log_softmax = [&](int32_t id) {
    return static_cast<double>(static_cast<long double>(logits[static_cast<size_t>(id)]) - top - std::log(z));
  };
  SamplerParams p = plain(0.7f);
  p.top_k = 5;  // stages change the draw, not the reported numbers
  p.n_probs = 20;
  p.seed = 11;
  Sampler s(p);
  for (int step = 0; step < 20; ++step) {
    const int32_t id = sample_ok(s, logits);
    const TokenProbs& probs = s.probs();
    EXPECT_EQ(probs.token, id);
    EXPECT_NEAR(probs.logp, log_softmax(id), 1e-5);
    ASSERT_EQ(probs.top.size(), 20u);
    for (size_t k = 0; k < probs.top.size(); ++k) {
      // the k-th most likely token: logits are 40 - 1.65 * j for j = 0..96, each once
      const float want_logit = 40.0f - static_cast<float>(k) * 1.65f;
      EXPECT_EQ(logits[static_cast<size_t>(probs.top[k].id)], want_logit) << k;
      EXPECT_NEAR(probs.top[k].logp, log_softmax(probs.top[k].id), 1e-5) << k;
      EXPECT_NEAR(probs.top[k].p, std::exp(log_softmax(probs.top[k].id)), 1e-6) << k;
    }
  }
  // The least likely token (p ~ e^-158, below a float's range) still has its exact log probability.
  SamplerParams all = plain(0.0f);
  all.n_probs = static_cast<int>(logits.size());
  Sampler every(all);
  sample_ok(every, logits);
  const TokenProb& last = every.probs().top.back();
  EXPECT_EQ(every.probs().p, every.probs().top.front().p);
  EXPECT_EQ(last.p, 0.0f);
  EXPECT_NEAR(last.logp, log_softmax(last.id), 1e-4);
  EXPECT_LT(last.logp, -150.0f);
}

}  // namespace
}  // namespace ox
