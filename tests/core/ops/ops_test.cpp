// Element-wise ops, norms and rope against float64 references written here from the definitions
// (RMSNorm, LayerNorm, rotary embeddings), independent of core/ops. Attention: attention_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/ops/ops.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"
#include "tests/support/random_data.h"

namespace ox {
namespace {

using test::random_vector;

TEST(Norms, RmsNormAndLayerNormMatchDefinitions) {
  const int64_t n = 96, rows = 3;
  const std::vector<float> x = random_vector(n * rows, 1), w = random_vector(n, 2), b = random_vector(n, 3);
  std::vector<float> rms(n * rows), ln(n * rows);
  rms_norm(x.data(), w.data(), n, rows, 1e-6f, rms.data());
  layer_norm(x.data(), w.data(), b.data(), n, rows, 1e-5f, ln.data());
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0, mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) {
      sq += double{x[r * n + i]} * x[r * n + i];
      mean += x[r * n + i];
    }
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    var /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double want_rms = x[r * n + i] / std::sqrt(sq / n + 1e-6) * w[i];
      const double want_ln = (x[r * n + i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i];
      EXPECT_NEAR(rms[r * n + i], want_rms, 1e-5 * (1 + std::fabs(want_rms)));
      EXPECT_NEAR(ln[r * n + i], want_ln, 1e-5 * (1 + std::fabs(want_ln)));
    }
  }
  // In place (the decoder normalises sub-block outputs where they lie).
  std::vector<float> inplace = x;
  rms_norm(inplace.data(), w.data(), n, rows, 1e-6f, inplace.data());
  EXPECT_EQ(inplace, rms);
}

TEST(Silu, SiluMulMatchesFloat64DefinitionOverTheWholeRange) {
  // silu(v) * y = v / (1 + e^-v) * y, on every kernel table. Inputs: a dense sweep of [-120, 120] (both clamp regions,
  // zero, the exp range ends) and normal samples; odd length so any vector tail runs too.
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0371f) x.push_back(v);
  for (float v : random_vector(1001, 9, 4.0f)) x.push_back(v);
  x.push_back(0.0f);
  x.push_back(-0.0f);
  x.push_back(1e-30f);
  const std::vector<float> y = random_vector(x.size(), 10);
  int checked = 0;
  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    std::vector<float> got = x;
    silu_mul(*table, got.data(), y.data(), static_cast<int64_t>(got.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = v / (1.0 + std::exp(-v)) * y[i];
      // 4 float rounding steps after an exp within 2 ulp: 1e-6 relative is ~8 ulp. Below 1e-30 in
      // magnitude (v < -64) the result may flush to any value that small: it is 0 next to 1.
      ASSERT_NEAR(got[i], want, 1e-6 * std::fabs(want) + 1e-30) << table->isa << " v=" << v << " y=" << y[i];
      ++checked;
    }
  }
  EXPECT_GT(checked, 7000);
}

TEST(Gelu, F16TableVersionRoundsInputAndOutput) {
  // gelu(1) = 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.841192 (tanh approximation).
  float x[5] = {1.0f, -10.5f, 12.0f, 0.3001f, -2.2f};
  const float in[5] = {1.0f, -10.5f, 12.0f, 0.3001f, -2.2f};
  gelu_f16(x, 5);
  EXPECT_NEAR(x[0], 0.841192, 1e-3);
  EXPECT_EQ(x[1], 0.0f);   // saturated below -10
  EXPECT_EQ(x[2], 12.0f);  // identity above 10
  for (int i = 0; i < 5; ++i) EXPECT_EQ(x[i], fp16_to_f32(f32_to_fp16(x[i]))) << "output is an f16 value";
  float y[5] = {1.0f, -10.5f, 12.0f, 0.3001f, -2.2f};
  gelu(y, 5);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(x[i], y[i], 2e-3 * (1 + std::fabs(y[i]))) << in[i];
}

// gelu / gelu_mul against GELU's tanh form in float64, 0.5 v (1 + tanh(u)), u = sqrt(2/pi) (v +
// 0.044715 v^3), within a few float ulps, over the range where it is neither ~0 nor ~v and out past
// both clamps of e^(-2u). Where 1 + tanh(u) cancels in double (v < -3) the reference is the same
// function as v / (1 + e^(-2u)); below v ~ -8.5 ours is v / (1 + e^88) (exp_bounded's clamp), under
// 1e-36 like the true value.
TEST(Gelu, MatchesTanhDefinitionInDouble) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.00731f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 50.0f, -50.0f, 300.0f}) x.push_back(v);
  std::vector<float> g = x, gm = x;
  const std::vector<float> twos(x.size(), 2.0f);
  gelu(g.data(), static_cast<int64_t>(g.size()));
  gelu_mul(gm.data(), twos.data(), static_cast<int64_t>(gm.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double u = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
    const double want = v > -3.0 ? 0.5 * v * (1.0 + std::tanh(u)) : v / (1.0 + std::exp(-2.0 * u));
    // The float argument 2u carries its rounding (4 operations: |2u| * 2.4e-7) into e^(-2u).
    EXPECT_NEAR(g[i], want, (4e-7 + 2.5e-7 * std::fabs(2.0 * u)) * std::fabs(want) + 1e-36) << "gelu(" << x[i] << ")";
    EXPECT_EQ(gm[i], 2.0f * g[i]) << "gelu_mul(" << x[i] << ", 2)";
  }
}

TEST(ReluSqr, SquaresThePositivePart) {
  float x[5] = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f};
  relu_sqr(x, 5);
  const float want[5] = {0.0f, 0.0f, 0.0f, 0.25f, 9.0f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(x[i], want[i]) << i;
}

// xIELU from its definition (Apertus), float64, with the learned parameters through softplus.
TEST(Xielu, MatchesDefinition) {
  const double a_n = 0.8, a_p = -0.3, beta = 0.5, eps = -1e-6;
  const XieluParams p = xielu_params(static_cast<float>(a_n), static_cast<float>(a_p), static_cast<float>(beta),
                                     static_cast<float>(eps));
  auto softplus = [](double v) { return std::log1p(std::exp(v)); };
  std::vector<float> x = {-30.0f, -3.0f, -0.5f, -1e-7f, 0.0f, 1e-7f, 0.25f, 2.0f, 40.0f};
  const std::vector<float> in = x;
  xielu(x.data(), static_cast<int64_t>(x.size()), p);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = in[i];
    const double alpha_n = beta + softplus(a_n), alpha_p = softplus(a_p);
    const double want = v > 0 ? alpha_p * v * v + beta * v : alpha_n * (std::expm1(std::min(v, eps)) - v) + beta * v;
    EXPECT_NEAR(x[i], want, 1e-6 * (1 + std::fabs(want))) << v;
  }
}

// Rotary embedding, float64: pair (a, b) of head dims rotated by pos * base^(-2i/n_rot) / factor_i;
// pairs are (2i, 2i+1) for NORM and (i, i + n_rot/2) for NEOX; dims >= n_rot untouched.
void rope_reference(std::vector<double>& x, int n_heads, int head_dim, int64_t pos, const RopeParams& p) {
  for (int h = 0; h < n_heads; ++h) {
    for (int i = 0; i < p.n_rot / 2; ++i) {
      double theta = pos * p.freq_scale * std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
      if (p.freq_factors != nullptr) theta /= p.freq_factors[i];
      const int a = p.style == RopeStyle::kNorm ? 2 * i : i;
      const int b = p.style == RopeStyle::kNorm ? 2 * i + 1 : i + p.n_rot / 2;
      double& x0 = x[static_cast<size_t>(h * head_dim + a)];
      double& x1 = x[static_cast<size_t>(h * head_dim + b)];
      const double r0 = x0 * std::cos(theta) - x1 * std::sin(theta);
      const double r1 = x0 * std::sin(theta) + x1 * std::cos(theta);
      x0 = r0;
      x1 = r1;
    }
  }
}

TEST(Rope, NormNeoxPartialAndFreqFactorsMatchReference) {
  const int n_heads = 3, head_dim = 32;
  const float factors[8] = {1, 1, 2, 4, 8, 8, 8, 8};
  struct Case {
    RopeStyle style;
    int n_rot;
    float base;
    const float* factors;
  } cases[] = {{RopeStyle::kNorm, 32, 10000, nullptr},
               {RopeStyle::kNeox, 32, 1e6f, nullptr},
               {RopeStyle::kNeox, 16, 10000, nullptr},  // phi2-style partial rotary
               {RopeStyle::kNorm, 16, 5e5f, factors}};
  for (const Case& c : cases) {
    RopeParams p;
    p.style = c.style;
    p.n_rot = c.n_rot;
    p.freq_base = c.base;
    p.freq_factors = c.factors;
    const int64_t n_tokens = 5, pos0 = 37;
    std::vector<float> x = random_vector(n_tokens * n_heads * head_dim, 11);
    const std::vector<float> orig = x;
    rope(x.data(), n_tokens, n_heads, head_dim, pos0, p);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<double> want(orig.begin() + t * n_heads * head_dim, orig.begin() + (t + 1) * n_heads * head_dim);
      rope_reference(want, n_heads, head_dim, pos0 + t, p);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(x[static_cast<size_t>(t * n_heads * head_dim) + i], want[i], 2e-5)
            << "style " << static_cast<int>(c.style) << " n_rot " << c.n_rot << " token " << t << " dim " << i;
      }
    }
  }
}

// YaRN, float64, from the definitions (the YaRN paper, as ggml's rope_yarn and
// ggml_rope_yarn_corr_dims apply them): pair i's interpolated angle theta_i * freq_scale is blended
// with the original theta_i by ramp_i * ext_factor, where ramp_i falls from 1 to 0 between the
// correction dims d(beta) = n_rot * ln(n_ctx_orig / (2 pi beta)) / (2 ln base) of beta_fast
// (floored) and beta_slow (ceiled); cos and sin are scaled by attn_factor * (1 + 0.1 ln(1/freq_scale)).
void rope_yarn_reference(std::vector<double>& x, int n_heads, int head_dim, int64_t pos, const RopeParams& p) {
  const double pi = 3.141592653589793;
  auto corr_dim = [&](double beta) { return p.n_rot * std::log(p.n_ctx_orig / (2 * pi * beta)) / (2 * std::log(p.freq_base)); };
  const double low = std::max(0.0, std::floor(corr_dim(p.beta_fast)));
  const double high = std::min(p.n_rot - 1.0, std::ceil(corr_dim(p.beta_slow)));
  const double mscale = p.attn_factor * (p.ext_factor != 0 ? 1 + 0.1 * std::log(1.0 / p.freq_scale) : 1.0);
  for (int h = 0; h < n_heads; ++h) {
    for (int i = 0; i < p.n_rot / 2; ++i) {
      const double theta_extrap = pos * std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
      const double ramp = 1 - std::min(1.0, std::max(0.0, (i - low) / std::max(0.001, high - low)));
      const double mix = ramp * p.ext_factor;
      const double theta = theta_extrap * p.freq_scale * (1 - mix) + theta_extrap * mix;
      const int a = p.style == RopeStyle::kNorm ? 2 * i : i;
      const int b = p.style == RopeStyle::kNorm ? 2 * i + 1 : i + p.n_rot / 2;
      double& x0 = x[static_cast<size_t>(h * head_dim + a)];
      double& x1 = x[static_cast<size_t>(h * head_dim + b)];
      const double r0 = mscale * (x0 * std::cos(theta) - x1 * std::sin(theta));
      const double r1 = mscale * (x0 * std::sin(theta) + x1 * std::cos(theta));
      x0 = r0;
      x1 = r1;
    }
  }
}

TEST(Rope, YarnMatchesReference) {
  const int n_heads = 2, head_dim = 64;
  struct Case {
    RopeStyle style;
    float base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int n_ctx_orig;
  } cases[] = {{RopeStyle::kNorm, 10000, 0.25f, 1.0f, 1.0f, 32, 1, 4096},        // mistral-style YaRN x4
               {RopeStyle::kNeox, 1e6f, 0.125f, 1.0f, 0.9f, 32, 1, 32768},      // with an attn_factor
               {RopeStyle::kNorm, 10000, 0.5f, 0.5f, 1.0f, 8, 2, 64},           // partial blend, grok's betas
               {RopeStyle::kNeox, 10000, 1.0f, 0.0f, 1.3f, 32, 1, 2048}};       // magnitude only
  for (const Case& c : cases) {
    RopeParams p;
    p.style = c.style;
    p.n_rot = head_dim;
    p.freq_base = c.base;
    p.freq_scale = c.freq_scale;
    p.ext_factor = c.ext_factor;
    p.attn_factor = c.attn_factor;
    p.beta_fast = c.beta_fast;
    p.beta_slow = c.beta_slow;
    p.n_ctx_orig = c.n_ctx_orig;
    const int64_t n_tokens = 4, pos0 = 1000;
    std::vector<float> x = random_vector(n_tokens * n_heads * head_dim, 12);
    const std::vector<float> orig = x;
    rope(x.data(), n_tokens, n_heads, head_dim, pos0, p);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<double> want(orig.begin() + t * n_heads * head_dim, orig.begin() + (t + 1) * n_heads * head_dim);
      rope_yarn_reference(want, n_heads, head_dim, pos0 + t, p);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(x[static_cast<size_t>(t * n_heads * head_dim) + i], want[i], 1e-4)
            << "freq_scale " << c.freq_scale << " ext " << c.ext_factor << " token " << t << " dim " << i;
      }
    }
    EXPECT_NEAR(rope_mscale(p), c.attn_factor * (c.ext_factor != 0 ? 1 + 0.1 * std::log(1.0 / c.freq_scale) : 1.0), 1e-6);
  }
}

}  // namespace
}  // namespace ox
