// Each stage of the chain against a naive reference written here (double precision, full sort,
// the textbook definition), plus hand-computed small cases (top-p boundary, min-p threshold,
// DRY on a repeated sequence, XTC with a seeded Rng, Mirostat's mu update).
#include "core/sampler/stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ox {
namespace {

// A list of candidates owning its storage.
struct List {
  std::vector<TokenCandidate> v;
  Candidates c;
  explicit List(std::vector<float> logits) {
    for (size_t i = 0; i < logits.size(); ++i) v.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
    c = Candidates{v.data(), v.size(), false, -1};
  }
  std::set<int32_t> ids() const {
    std::set<int32_t> out;
    for (size_t i = 0; i < c.size; ++i) out.insert(c.data[i].id);
    return out;
  }
  float logit(int32_t id) const {
    for (size_t i = 0; i < c.size; ++i) {
      if (c.data[i].id == id) return c.data[i].logit;
    }
    return NAN;
  }
};

// Deterministic pseudo-random logits in [-8, 8).
std::vector<float> random_logits(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (float& l : out) l = static_cast<float>(rng.uniform() * 16.0 - 8.0);
  return out;
}

// --- the naive references ---
std::vector<int32_t> ref_sorted_ids(const std::vector<float>& l) {
  std::vector<int32_t> ids(l.size());
  for (size_t i = 0; i < l.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  return ids;
}
std::vector<double> ref_probs(const std::vector<float>& l) {
  double mx = -INFINITY, z = 0;
  for (float x : l) mx = std::max(mx, static_cast<double>(x));
  for (float x : l) z += std::exp(x - mx);
  std::vector<double> p;
  for (float x : l) p.push_back(std::exp(x - mx) / z);
  return p;
}
std::set<int32_t> ref_top_k(const std::vector<float>& l, int k) {
  const std::vector<int32_t> ids = ref_sorted_ids(l);
  return std::set<int32_t>(ids.begin(), ids.begin() + std::min<size_t>(k, ids.size()));
}
std::set<int32_t> ref_top_p(const std::vector<float>& l, double top_p) {
  const std::vector<double> p = ref_probs(l);
  std::set<int32_t> out;
  double cum = 0;
  for (int32_t id : ref_sorted_ids(l)) {
    out.insert(id);
    cum += p[id];
    if (cum >= top_p) break;
  }
  return out;
}
std::set<int32_t> ref_min_p(const std::vector<float>& l, double min_p) {
  const std::vector<double> p = ref_probs(l);
  const double pmax = *std::max_element(p.begin(), p.end());
  std::set<int32_t> out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] >= min_p * pmax) out.insert(static_cast<int32_t>(i));
  }
  return out;
}
std::set<int32_t> ref_typical(const std::vector<float>& l, double typ) {
  const std::vector<double> p = ref_probs(l);
  double h = 0;
  for (double x : p) h -= x * std::log(x);
  std::vector<int32_t> ids(l.size());
  for (size_t i = 0; i < l.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return std::fabs(-std::log(p[a]) - h) < std::fabs(-std::log(p[b]) - h); });
  std::set<int32_t> out;
  double cum = 0;
  for (int32_t id : ids) {
    out.insert(id);
    cum += p[id];
    if (cum > typ) break;
  }
  return out;
}
std::set<int32_t> ref_top_n_sigma(const std::vector<float>& l, double n) {
  double mean = 0, var = 0, mx = -INFINITY;
  for (float x : l) mean += x, mx = std::max(mx, static_cast<double>(x));
  mean /= l.size();
  for (float x : l) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / l.size());
  std::set<int32_t> out;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] >= mx - n * sd) out.insert(static_cast<int32_t>(i));
  }
  return out;
}
std::set<int32_t> finite_ids(const List& list) {
  std::set<int32_t> out;
  for (size_t i = 0; i < list.c.size; ++i) {
    if (list.c.data[i].logit != -INFINITY) out.insert(list.c.data[i].id);
  }
  return out;
}

// --- reference comparisons over random logits ---
TEST(Stages, TopKMatchesReference) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<float> l = random_logits(300, seed);
    for (int k : {1, 5, 40, 299, 300, 1000}) {
      List list(l);
      apply_top_k(list.c, k);
      EXPECT_EQ(list.ids(), ref_top_k(l, k)) << "seed " << seed << " k " << k;
      EXPECT_TRUE(list.c.sorted);
      for (size_t i = 1; i < list.c.size; ++i) EXPECT_GE(list.c.data[i - 1].logit, list.c.data[i].logit);
    }
  }
  List off(random_logits(10, 3));
  apply_top_k(off.c, 0);
  EXPECT_EQ(off.c.size, 10u);
}

// Runs `apply` on 20 random logit vectors of size n for each parameter value and compares the
// surviving ids (finite ones, for the masking stages) with the reference's.
template <typename Apply, typename Ref>
void expect_same_survivors(const char* what, size_t n, std::initializer_list<float> values, Apply apply, Ref ref,
                           bool masks = false) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<float> l = random_logits(n, seed);
    for (float v : values) {
      List list(l);
      apply(list.c, v);
      EXPECT_EQ(masks ? finite_ids(list) : list.ids(), ref(l, v)) << what << " seed " << seed << " value " << v;
    }
  }
}

TEST(Stages, TopPMatchesReference) {
  expect_same_survivors("top_p", 200, {0.05f, 0.3f, 0.6f, 0.9f, 0.99f},
                        [](Candidates& c, float p) { apply_top_p(c, p, 0); }, ref_top_p);
}

TEST(Stages, MinPMatchesReferenceSortedOrNot) {
  expect_same_survivors("min_p", 200, {0.001f, 0.05f, 0.3f, 0.9f},
                        [](Candidates& c, float p) { apply_min_p(c, p, 0); }, ref_min_p);
  expect_same_survivors("min_p after sorting", 200, {0.001f, 0.05f, 0.3f, 0.9f},
                        [](Candidates& c, float p) {
                          apply_top_k(c, 200);
                          apply_min_p(c, p, 0);
                        },
                        ref_min_p);
}

TEST(Stages, TypicalMatchesReference) {
  expect_same_survivors("typical", 100, {0.2f, 0.5f, 0.9f},
                        [](Candidates& c, float p) { apply_typical(c, p, 0); }, ref_typical);
}

TEST(Stages, TopNSigmaMatchesReference) {
  expect_same_survivors("top_n_sigma", 100, {0.5f, 1.0f, 2.0f},
                        [](Candidates& c, float n) { apply_top_n_sigma(c, n); }, ref_top_n_sigma, /*masks=*/true);
}

TEST(Stages, PenaltiesMatchReference) {
  const std::vector<float> l = random_logits(50, 9);
  const std::vector<int32_t> history = {1, 2, 3, 2, 7, 2, 9, 1, 40, 3};
  for (int last_n : {-1, 0, 3, 6, 64}) {
    List list(l);
    apply_penalties(list.c, history, last_n, 1.3f, 0.25f, 0.5f);
    std::map<int32_t, int> count;
    const size_t from = last_n < 0 ? 0 : history.size() - std::min<size_t>(history.size(), last_n);
    for (size_t i = from; i < history.size(); ++i) count[history[i]]++;
    for (int32_t id = 0; id < 50; ++id) {
      double want = l[id];
      if (count.count(id) && last_n != 0) {
        want = want <= 0 ? want * 1.3 : want / 1.3;
        want -= count[id] * 0.25 + 0.5;
      }
      EXPECT_NEAR(list.logit(id), want, 1e-5) << "last_n " << last_n << " id " << id;
    }
  }
}

TEST(Stages, TemperatureAndDynamicTemperatureMatchReference) {
  const std::vector<float> l = random_logits(30, 4);
  List plain(l);
  apply_temperature(plain.c, 0.7f, 0.0f, 1.0f);
  for (int32_t id = 0; id < 30; ++id) EXPECT_NEAR(plain.logit(id), l[id] / 0.7, 1e-5);

  // Dynamic: T = (t - r) + 2r * (H / log n)^e, H the entropy at temperature 1.
  const float t = 1.0f, r = 0.5f, e = 1.5f;
  const std::vector<double> p = ref_probs(l);
  double h = 0;
  for (double x : p) h -= x * std::log(x);
  const double temp = (t - r) + 2 * r * std::pow(h / std::log(30.0), e);
  List dyn(l);
  apply_temperature(dyn.c, t, r, e);
  for (int32_t id = 0; id < 30; ++id) EXPECT_NEAR(dyn.logit(id), l[id] / temp, 1e-4) << id;
  double sum = 0;
  for (size_t i = 0; i < dyn.c.size; ++i) sum += dyn.c.data[i].p;
  EXPECT_NEAR(sum, 1.0, 1e-5);

  List greedy({1.0f, 3.0f, 2.0f, 3.0f});
  apply_temperature(greedy.c, 0.0f, 0.0f, 1.0f);
  EXPECT_EQ(finite_ids(greedy), (std::set<int32_t>{1}));  // the first of equal maxima
}

TEST(Stages, DistDrawsFollowTheSoftmax) {
  const std::vector<float> l = {0.0f, 1.0f, 2.0f, -1.0f};
  const std::vector<double> p = ref_probs(l);
  Rng rng(5);
  std::map<int32_t, int> counts;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    List list(l);
    select_dist(list.c, rng);
    ASSERT_GE(list.c.selected, 0);
    counts[list.c.data[list.c.selected].id]++;
  }
  for (int32_t id = 0; id < 4; ++id) {
    const double sd = std::sqrt(p[id] * (1 - p[id]) / n);
    EXPECT_NEAR(counts[id] / static_cast<double>(n), p[id], 5 * sd) << id;
  }
  List banned({-INFINITY, -INFINITY});
  select_dist(banned.c, rng);
  EXPECT_EQ(banned.c.selected, -1);
}

// --- hand-computed cases ---
TEST(Stages, TopPBoundaryIncludesTheTokenThatReachesP) {
  // p = 0.5, 0.25, 0.125, 0.125: top_p 0.75 is reached exactly by {0, 1}; 0.76 needs a third.
  const std::vector<float> l = {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)};
  List a(l);
  apply_top_p(a.c, 0.75f, 0);
  EXPECT_EQ(a.ids(), (std::set<int32_t>{0, 1}));
  List b(l);
  apply_top_p(b.c, 0.76f, 0);
  EXPECT_EQ(b.ids(), (std::set<int32_t>{0, 1, 2}));
  List c(l);
  apply_top_p(c.c, 0.1f, 3);  // min_keep
  EXPECT_EQ(c.c.size, 3u);
}

TEST(Stages, MinPThresholdIsRelativeToTheTopProbability) {
  // p = 0.5, 0.25, 0.125, 0.125: min_p 0.25 keeps p >= 0.125 (all); 0.3 keeps p >= 0.15.
  const std::vector<float> l = {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)};
  List a(l);
  apply_min_p(a.c, 0.25f, 0);
  EXPECT_EQ(a.c.size, 4u);
  List b(l);
  apply_min_p(b.c, 0.3f, 0);
  EXPECT_EQ(b.ids(), (std::set<int32_t>{0, 1}));
}

TEST(Stages, TypicalKeepsTheTokensNearestTheEntropy) {
  // p = 0.5, 0.25, 0.25: H = 1.5 ln 2; |-ln p - H| = 0.5 ln 2 for all three: ties keep the
  // probability order; typical 0.6 needs 0.5 + 0.25.
  const std::vector<float> l = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
  List a(l);
  apply_typical(a.c, 0.6f, 0);
  EXPECT_EQ(a.ids(), (std::set<int32_t>{0, 1}));
}

TEST(Stages, DryPenalisesTheTokenThatExtendsARepeat) {
  // llama.cpp's comment example: a b c c b c y a b c -> repeat counts 0 0 3 1 0 2 0 0 0 0;
  // emitting c would extend "a b c" (3), y "b c" (2), b "c" (1).
  enum { a = 1, b = 2, c = 3, y = 4, z = 5 };
  const std::vector<int32_t> history = {a, b, c, c, b, c, y, a, b, c};
  const DryBreakers none;
  List list(std::vector<float>(6, 0.0f));
  apply_dry(list.c, history, {0.8f, 1.75f, 2, -1}, none);
  EXPECT_NEAR(list.logit(c), -0.8 * 1.75, 1e-6);  // L = 3: multiplier * base^(3 - 2)
  EXPECT_NEAR(list.logit(y), -0.8, 1e-6);         // L = 2: base^0
  EXPECT_EQ(list.logit(b), 0.0f);                 // L = 1 < allowed length
  EXPECT_EQ(list.logit(a), 0.0f);
  EXPECT_EQ(list.logit(z), 0.0f);

  // A breaker (a) two tokens back caps every repeat at 2: c and y both get base^0.
  DryBreakers at_a;
  at_a.emplace(a, std::vector<int32_t>());
  List limited(std::vector<float>(6, 0.0f));
  apply_dry(limited.c, history, {0.8f, 1.75f, 2, -1}, at_a);
  EXPECT_NEAR(limited.logit(c), -0.8, 1e-6);
  EXPECT_NEAR(limited.logit(y), -0.8, 1e-6);
  // A single-token breaker is never penalised itself (y, three back: c keeps its 3).
  DryBreakers at_y;
  at_y.emplace(y, std::vector<int32_t>());
  List own(std::vector<float>(6, 0.0f));
  apply_dry(own.c, history, {0.8f, 1.75f, 2, -1}, at_y);
  EXPECT_NEAR(own.logit(c), -0.8 * 1.75, 1e-6);
  EXPECT_EQ(own.logit(y), 0.0f);

  // last_n = 4 sees only "y a b c": nothing repeats.
  List window(std::vector<float>(6, 0.0f));
  apply_dry(window.c, history, {0.8f, 1.75f, 2, 4}, none);
  for (int32_t id = 0; id < 6; ++id) EXPECT_EQ(window.logit(id), 0.0f);
}

// Naive DRY: for every earlier position i, the longest common suffix of history[..i] and the
// whole window; the token after i gets it if it reaches the allowed length.
TEST(Stages, DryMatchesNaiveReference) {
  Rng rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<int32_t> h(40);
    for (int32_t& t : h) t = static_cast<int32_t>(rng.next() % 4);
    const int n = 40;
    std::map<int32_t, int> longest;
    for (int i = 0; i < n - 1; ++i) {
      int len = 0;
      while (len <= i && h[i - len] == h[n - 1 - len]) ++len;
      if (len >= 2 && len > longest[h[i + 1]]) longest[h[i + 1]] = len;
    }
    List list(std::vector<float>(4, 0.0f));
    apply_dry(list.c, h, {1.0f, 2.0f, 2, -1}, DryBreakers());
    for (int32_t id = 0; id < 4; ++id) {
      const double want = longest.count(id) && longest[id] >= 2 ? -std::pow(2.0, longest[id] - 2) : 0.0;
      EXPECT_NEAR(list.logit(id), want, 1e-3) << "round " << round << " id " << id;
    }
  }
}

TEST(Stages, XtcRemovesTopChoicesButTheLastAboveThreshold) {
  // p = 0.4, 0.3, 0.2, 0.1, threshold 0.25: 0.4 goes, 0.3 (the least likely above) stays.
  const std::vector<float> l = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
  Rng rng(3);
  List list(l);
  apply_xtc(list.c, 1.0f, 0.25f, 1, rng);
  EXPECT_EQ(list.ids(), (std::set<int32_t>{1, 2, 3}));

  // With probability 0.5 it fires exactly when the seeded draw is <= 0.5.
  Rng rng_a(77), rng_b(77);
  for (int i = 0; i < 200; ++i) {
    const bool fires = static_cast<float>(rng_b.uniform()) <= 0.5f;
    List each(l);
    apply_xtc(each.c, 0.5f, 0.25f, 1, rng_a);
    EXPECT_EQ(each.c.size, fires ? 3u : 4u) << i;
  }
  // Threshold above 0.5 disables it (and draws nothing).
  Rng untouched(9), reference(9);
  List off(l);
  apply_xtc(off.c, 1.0f, 0.6f, 1, untouched);
  EXPECT_EQ(off.c.size, 4u);
  EXPECT_EQ(untouched.next(), reference.next());
}

TEST(Stages, MirostatV2UpdatesMuWithTheSurprise) {
  // p = 0.5, 0.25, 0.25; mu = 1.5 keeps surprise <= 1.5 bits: only token 0 (1 bit).
  const std::vector<float> l = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
  Rng rng(1);
  float mu = 1.5f;
  List list(l);
  select_mirostat_v2(list.c, /*tau=*/3.0f, /*eta=*/0.1f, &mu, rng);
  ASSERT_EQ(list.c.selected, 0);
  EXPECT_EQ(list.c.data[0].id, 0);
  // the chosen token has p = 1 after renormalising: surprise 0, mu -= 0.1 * (0 - 3)
  EXPECT_NEAR(mu, 1.8f, 1e-6);
}

TEST(Stages, MirostatV1EstimatesZipfAndUpdatesMu) {
  // Zipf with s = 2 (p_i ~ 1 / (i + 1)^2): the estimate is s = 2, epsilon = 1, and
  // k = (epsilon * 2^mu / (1 - n^-epsilon))^(1/s) = sqrt(64 / 0.999) = 8.004 -> the top 8.
  std::vector<float> z;
  for (int i = 0; i < 1000; ++i) z.push_back(-2.0f * std::log(static_cast<float>(i + 1)));
  Rng rng(2);
  float mu = 6.0f;
  List zl(z);
  select_mirostat(zl.c, /*tau=*/3.0f, /*eta=*/0.1f, 100, 1000, &mu, rng);
  EXPECT_EQ(zl.c.size, 8u);
  ASSERT_GE(zl.c.selected, 0);
  const float surprise = -std::log2(zl.c.data[zl.c.selected].p);
  EXPECT_NEAR(mu, 6.0f - 0.1f * (surprise - 3.0f), 1e-5);
}

TEST(Stages, LogitBiasAddsAndBans) {
  List list({0.0f, 1.0f, 2.0f});
  const LogitBias biases[] = {{0, 1.5f}, {2, -INFINITY}};
  apply_logit_bias(list.c, biases);
  EXPECT_EQ(list.logit(0), 1.5f);
  EXPECT_EQ(list.logit(1), 1.0f);
  EXPECT_EQ(list.logit(2), -INFINITY);
}

TEST(Stages, DryBreakersFromTextFollowLlamaCpp) {
  // vocabulary: 0 "a", 1 "b:", 2 "\n", 3 "x\n"... breaker ":\n" spans tokens: "b:" ends with ':'
  // -> tail = tokenize("\n") = {2}; "x\n" does not contain ":\n" nor end with ':'.
  const std::vector<std::string> vocab = {"a", "b:", "\n", "x\n", ":\nz"};
  auto text = [&](int32_t id) { return vocab[static_cast<size_t>(id)]; };
  auto tokenize = [&](const std::string& s) {
    std::vector<int32_t> out;
    for (char ch : s) out.push_back(ch == '\n' ? 2 : 0);
    return out;
  };
  const std::vector<std::string> breakers = {":\n"};
  const DryBreakers b = build_dry_breakers(breakers, 5, text, tokenize);
  EXPECT_EQ(b.count(1), 1u);
  EXPECT_EQ(b.find(1)->second, std::vector<int32_t>{2});
  EXPECT_EQ(b.count(4), 1u);  // contains the whole breaker: a single-token breaker
  EXPECT_TRUE(b.find(4)->second.empty());
  EXPECT_EQ(b.count(0) + b.count(2) + b.count(3), 0u);
}

}  // namespace
}  // namespace ox
