// ssm_conv and ssm_scan against float64 references written here from the definitions (a causal
// convolution over the whole sequence at once; the recurrence unrolled token by token with its
// state in doubles), and the split of a sequence into pieces giving the same outputs as one call.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/ops/ssm.h"
#include "tests/support/random_data.h"

namespace ox {
namespace {

using test::random_vector;

double softplus_ref(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

// out[t][c] = sum_i w[c][i] * u[t - (k-1) + i][c] over the full sequence u = history | x.
std::vector<double> conv_ref(const std::vector<float>& history, const std::vector<float>& x,
                             const std::vector<float>& w, int64_t channels, int k, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n * channels));
  for (int64_t c = 0; c < channels; ++c) {
    auto u = [&](int64_t t) -> double {  // t in [-(k-1), n)
      return t < 0 ? history[static_cast<size_t>(c * (k - 1) + (k - 1) + t)] : x[static_cast<size_t>(t * channels + c)];
    };
    for (int64_t t = 0; t < n; ++t) {
      double s = 0;
      for (int i = 0; i < k; ++i) s += double{w[static_cast<size_t>(c * k + i)]} * u(t - (k - 1) + i);
      out[static_cast<size_t>(t * channels + c)] = s;
    }
  }
  return out;
}

TEST(SsmConv, MatchesTheDefinitionAndCarriesItsWindow) {
  const int64_t channels = 24, n = 7;
  const int k = 4;
  const std::vector<float> history = random_vector(static_cast<size_t>(channels * (k - 1)), 1),
                           x = random_vector(static_cast<size_t>(n * channels), 2),
                           w = random_vector(static_cast<size_t>(channels * k), 3);
  std::vector<float> state = history, out(static_cast<size_t>(n * channels));
  ssm_conv(state.data(), x.data(), channels, w.data(), channels, k, n, out.data(), channels);
  const std::vector<double> want = conv_ref(history, x, w, channels, k, n);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-5) << i;
  // The state now holds the last k - 1 inputs of each channel, oldest first.
  for (int64_t c = 0; c < channels; ++c) {
    for (int i = 0; i < k - 1; ++i) {
      EXPECT_EQ(state[static_cast<size_t>(c * (k - 1) + i)], x[static_cast<size_t>((n - (k - 1) + i) * channels + c)]);
    }
  }
  // Token by token from the same history: the same outputs.
  std::vector<float> state2 = history, out2(out.size());
  for (int64_t t = 0; t < n; ++t) {
    ssm_conv(state2.data(), x.data() + t * channels, channels, w.data(), channels, k, 1, out2.data() + t * channels,
             channels);
  }
  EXPECT_EQ(out, out2);
  EXPECT_EQ(state, state2);
}

struct ScanCase {
  int n_head, head_dim, d_state, n_group;
  bool a_per_state;
};

class SsmScan : public ::testing::TestWithParam<ScanCase> {};

TEST_P(SsmScan, MatchesTheRecurrenceInDoubles) {
  const ScanCase p = GetParam();
  const int64_t n = 9, dim = int64_t{p.n_head} * p.head_dim, bc = int64_t{p.n_group} * p.d_state;
  const auto count = [](int64_t v) { return static_cast<size_t>(v); };
  const std::vector<float> x = random_vector(count(n * dim), 4), dt = random_vector(count(n * p.n_head), 5),
                           b = random_vector(count(n * bc), 7), c = random_vector(count(n * bc), 8),
                           s0 = random_vector(count(dim * p.d_state), 9);
  // A < 0, as in trained models (A = -exp(A_log)): the state decays.
  std::vector<float> a = random_vector(count(p.a_per_state ? p.n_head * p.d_state : p.n_head), 6);
  for (float& v : a) v = -std::fabs(v);
  SsmScanShape shape{p.n_head, p.head_dim, p.d_state, p.n_group, p.a_per_state};
  std::vector<float> s = s0, y(static_cast<size_t>(n * dim));
  ssm_scan(s.data(), SsmScanInput{x.data(), dim, dt.data(), p.n_head, a.data(), b.data(), c.data(), bc}, shape, n,
           y.data(), dim);

  std::vector<double> sd(s0.begin(), s0.end());
  for (int64_t t = 0; t < n; ++t) {
    for (int h = 0; h < p.n_head; ++h) {
      const double delta = softplus_ref(dt[static_cast<size_t>(t * p.n_head + h)]);
      const int g = h / (p.n_head / p.n_group);
      for (int i = 0; i < p.head_dim; ++i) {
        const int64_t ch = int64_t{h} * p.head_dim + i;
        double yv = 0;
        for (int j = 0; j < p.d_state; ++j) {
          const double aa = p.a_per_state ? a[static_cast<size_t>(h * p.d_state + j)] : a[static_cast<size_t>(h)];
          double& st = sd[static_cast<size_t>(ch * p.d_state + j)];
          st = st * std::exp(delta * aa) +
               double{b[static_cast<size_t>(t * bc + g * p.d_state + j)]} * x[static_cast<size_t>(t * dim + ch)] * delta;
          yv += st * c[static_cast<size_t>(t * bc + g * p.d_state + j)];
        }
        EXPECT_NEAR(y[static_cast<size_t>(t * dim + ch)], yv, 1e-4 * (1 + std::fabs(yv))) << t << " " << ch;
      }
    }
  }
  for (size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(s[i], sd[i], 1e-4 * (1 + std::fabs(sd[i]))) << i;

  // Two calls (5 tokens, then 4) carry the state: the same outputs as one call.
  std::vector<float> s2 = s0, y2(y.size());
  const SsmScanInput first{x.data(), dim, dt.data(), p.n_head, a.data(), b.data(), c.data(), bc};
  ssm_scan(s2.data(), first, shape, 5, y2.data(), dim);
  const SsmScanInput rest{x.data() + 5 * dim, dim,  dt.data() + 5 * p.n_head, p.n_head, a.data(),
                          b.data() + 5 * bc,   c.data() + 5 * bc, bc};
  ssm_scan(s2.data(), rest, shape, n - 5, y2.data() + 5 * dim, dim);
  EXPECT_EQ(y, y2);
  EXPECT_EQ(s, s2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SsmScan,
                         ::testing::Values(ScanCase{32, 1, 16, 1, true},    // Mamba-1: a head per channel
                                           ScanCase{4, 8, 16, 2, false},    // Mamba-2: groups of heads
                                           ScanCase{6, 4, 8, 1, false}));   // one group

TEST(Softplus, FollowsGgmlAboveTwenty) {
  EXPECT_EQ(softplus(25.0f), 25.0f);
  EXPECT_NEAR(softplus(0.0f), std::log(2.0), 1e-7);
  EXPECT_NEAR(softplus(-3.0f), std::log1p(std::exp(-3.0)), 1e-7);
}

}  // namespace
}  // namespace ox
