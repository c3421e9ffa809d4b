// gated_delta_rule against a float64 reference written here from the delta rule as a matrix update
// (S = exp(g) S + beta (v - exp(g) S k) k^T, y = S q / sqrt(d)), with more value heads than key heads,
// and split calls carrying the state.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/ops/delta_net.h"
#include "tests/support/random_data.h"

namespace ox {
namespace {

using test::random_vector;

void l2_normalise(std::vector<float>& x, int64_t s) {
  for (size_t r = 0; r < x.size(); r += static_cast<size_t>(s)) {
    double sum = 0;
    for (int64_t i = 0; i < s; ++i) sum += double{x[r + static_cast<size_t>(i)]} * x[r + static_cast<size_t>(i)];
    for (int64_t i = 0; i < s; ++i) x[r + static_cast<size_t>(i)] = static_cast<float>(x[r + static_cast<size_t>(i)] / std::sqrt(sum));
  }
}

TEST(GatedDeltaRule, MatchesTheMatrixUpdateInDoubles) {
  const int n_v = 4, n_k = 2, S = 8;
  const int64_t n = 7, qk = int64_t{n_k} * S, vd = int64_t{n_v} * S;
  const auto count = [](int64_t v) { return static_cast<size_t>(v); };
  std::vector<float> q = random_vector(count(n * qk), 1), k = random_vector(count(n * qk), 2);
  l2_normalise(q, S);
  l2_normalise(k, S);
  const std::vector<float> v = random_vector(count(n * vd), 3), m0 = random_vector(count(n_v * S * S), 6);
  std::vector<float> g = random_vector(count(n * n_v), 4), beta = random_vector(count(n * n_v), 5);
  for (float& x : g) x = -std::fabs(x);                        // decays exp(g) in (0, 1]
  for (float& x : beta) x = 1.0f / (1.0f + std::exp(-x));      // sigmoid, as the model makes it
  std::vector<float> m = m0, y(count(n * vd));
  gated_delta_rule(m.data(), DeltaNetInput{q.data(), k.data(), qk, v.data(), vd, g.data(), beta.data()}, n_v, n_k, S,
                   n, y.data(), vd);

  std::vector<double> md(m0.begin(), m0.end());
  for (int64_t t = 0; t < n; ++t) {
    for (int h = 0; h < n_v; ++h) {
      const int kh = h % n_k;
      double* M = md.data() + h * S * S;
      const double decay = std::exp(double{g[count(t * n_v + h)]}), b = beta[count(t * n_v + h)];
      for (int i = 0; i < S * S; ++i) M[i] *= decay;
      std::vector<double> err(S);
      for (int j = 0; j < S; ++j) {
        double mk = 0;
        for (int i = 0; i < S; ++i) mk += M[j * S + i] * k[count(t * qk + kh * S + i)];
        err[count(j)] = v[count(t * vd + h * S + j)] - mk;
      }
      for (int j = 0; j < S; ++j) {
        for (int i = 0; i < S; ++i) M[j * S + i] += b * err[count(j)] * k[count(t * qk + kh * S + i)];
      }
      for (int j = 0; j < S; ++j) {
        double out = 0;
        for (int i = 0; i < S; ++i) out += M[j * S + i] * q[count(t * qk + kh * S + i)];
        out /= std::sqrt(double{S});
        EXPECT_NEAR(y[count(t * vd + h * S + j)], out, 1e-5 * (1 + std::fabs(out))) << t << " " << h << " " << j;
      }
    }
  }
  for (size_t i = 0; i < m.size(); ++i) EXPECT_NEAR(m[i], md[i], 1e-5 * (1 + std::fabs(md[i])));

  std::vector<float> m2 = m0, y2(y.size());
  gated_delta_rule(m2.data(), DeltaNetInput{q.data(), k.data(), qk, v.data(), vd, g.data(), beta.data()}, n_v, n_k, S,
                   3, y2.data(), vd);
  gated_delta_rule(m2.data(),
                   DeltaNetInput{q.data() + 3 * qk, k.data() + 3 * qk, qk, v.data() + 3 * vd, vd, g.data() + 3 * n_v,
                                 beta.data() + 3 * n_v},
                   n_v, n_k, S, n - 3, y2.data() + 3 * vd, vd);
  EXPECT_EQ(y, y2);
  EXPECT_EQ(m, m2);
}

}  // namespace
}  // namespace ox
