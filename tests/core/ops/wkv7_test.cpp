// wkv7 against a float64 reference written here from RWKV-7's recurrence (the state as a matrix
// update S = S diag(w) + v k^T + (S a) b^T, then y = S r), and split calls carrying the state.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/ops/wkv7.h"
#include "tests/support/random_data.h"

namespace ox {
namespace {

using test::random_vector;

TEST(Wkv7, MatchesTheMatrixRecurrenceInDoubles) {
  const int n_head = 3, hs = 8;
  const int64_t n = 6, dim = int64_t{n_head} * hs;
  const size_t count = static_cast<size_t>(n * dim);
  const std::vector<float> r = random_vector(count, 1), k = random_vector(count, 3), v = random_vector(count, 4),
                           a = random_vector(count, 5), b = random_vector(count, 6),
                           s0 = random_vector(static_cast<size_t>(n_head * hs * hs), 7);
  std::vector<float> w = random_vector(count, 2);
  for (float& x : w) x = std::exp(-0.6f / (1.0f + std::exp(-x)));  // decays in (0.54, 1), as the model makes them
  std::vector<float> s = s0, y(count);
  wkv7(s.data(), Wkv7Input{r.data(), w.data(), k.data(), v.data(), a.data(), b.data(), dim}, n_head, hs, n, y.data(),
       dim);

  std::vector<double> sd(s0.begin(), s0.end());
  for (int64_t t = 0; t < n; ++t) {
    for (int h = 0; h < n_head; ++h) {
      const auto at = [&](const std::vector<float>& x, int64_t i) { return double{x[static_cast<size_t>(t * dim + h * hs + i)]}; };
      double* S = sd.data() + h * hs * hs;
      std::vector<double> sa(hs, 0.0);
      for (int i = 0; i < hs; ++i) {
        for (int j = 0; j < hs; ++j) sa[static_cast<size_t>(i)] += S[i * hs + j] * at(a, j);
      }
      for (int i = 0; i < hs; ++i) {
        double out = 0;
        for (int j = 0; j < hs; ++j) {
          S[i * hs + j] = S[i * hs + j] * at(w, j) + at(v, i) * at(k, j) + sa[static_cast<size_t>(i)] * at(b, j);
          out += S[i * hs + j] * at(r, j);
        }
        EXPECT_NEAR(y[static_cast<size_t>(t * dim + h * hs + i)], out, 1e-4 * (1 + std::fabs(out))) << t << " " << h;
      }
    }
  }
  for (size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(s[i], sd[i], 1e-4 * (1 + std::fabs(sd[i])));

  std::vector<float> s2 = s0, y2(count);
  const Wkv7Input first{r.data(), w.data(), k.data(), v.data(), a.data(), b.data(), dim};
  wkv7(s2.data(), first, n_head, hs, 2, y2.data(), dim);
  const int64_t o = 2 * dim;
  const Wkv7Input rest{r.data() + o, w.data() + o, k.data() + o, v.data() + o, a.data() + o, b.data() + o, dim};
  wkv7(s2.data(), rest, n_head, hs, n - 2, y2.data() + o, dim);
  EXPECT_EQ(y, y2);
  EXPECT_EQ(s, s2);
}

}  // namespace
}  // namespace ox
