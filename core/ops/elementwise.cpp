// Element-wise ops and normalisations. Plain loops in a fixed order: they are a small share of
// the time, and a fixed order keeps native and wasm results identical.
#include <algorithm>
#include <cmath>

#include "core/base/activation.h"
#include "core/ops/ops.h"
#include "core/quant/traits.h"

namespace ox {

void rms_norm(const float* x, const float* weight, int64_t n, int64_t n_rows, float eps, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    double sum_sq = 0;  // double: the mean of squares of a 4096-wide row loses bits in float
    for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
    for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * inv * weight[i];
  }
}

void layer_norm(const float* x, const float* weight, const float* bias, int64_t n, int64_t n_rows, float eps,
                float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += xr[i];
    mean /= static_cast<double>(n);
    double var = 0;
    for (int64_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int64_t i = 0; i < n; ++i) {
      o[i] = (xr[i] - m) * inv * (weight != nullptr ? weight[i] : 1.0f) + (bias != nullptr ? bias[i] : 0.0f);
    }
  }
}

void silu_mul(const kernels::KernelTable& k, float* x, const float* y, int64_t n) { k.silu_mul(x, y, n); }

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
// GELU's tanh form with libm's tanh, as ggml fills its f16 table (ggml_gelu_f32).
inline float gelu_tanh(float v) {
  return 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * (1.0f + 0.044715f * v * v)));
}
inline float round_f16(float v) { return fp16_to_f32(f32_to_fp16(v)); }
inline float gelu_f16_table(float v) {
  if (v <= -10.0f) return 0.0f;
  if (v >= 10.0f) return v;
  return round_f16(gelu_tanh(round_f16(v)));
}
}  // namespace

void gelu_mul_f16(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_f16_table(x[i]) * y[i];
}

void gelu_f16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_f16_table(x[i]);
}

void round_to_f16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_f16(x[i]);
}

// gelu_one (core/base/activation.h): libm's tanh was most of a BERT's non-matmul time; this form
// vectorises and gives native and wasm the same bits.
void gelu_mul(float* __restrict x, const float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_one(x[i]) * y[i];
}

void gelu(float* x, int64_t n) { gelu_ref(x, n); }

void gelu(const kernels::KernelTable& k, float* x, int64_t n) { k.gelu(x, n); }

void relu_sqr(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float r = x[i] > 0.0f ? x[i] : 0.0f;
    x[i] = r * r;
  }
}

namespace {
float softplus(float v) { return v > 20.0f ? v : std::log(1.0f + std::exp(v)); }  // ggml's, in float
}  // namespace

XieluParams xielu_params(float alpha_n, float alpha_p, float beta, float eps) {
  return XieluParams{beta + softplus(alpha_n), softplus(alpha_p), beta, eps};
}

void xielu(float* x, int64_t n, const XieluParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = v > 0.0f ? p.alpha_p * v * v + p.beta * v : (std::expm1(std::min(v, p.eps)) - v) * p.alpha_n + p.beta * v;
  }
}

void add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void add_bias(float* x, const float* bias, int64_t n, int64_t n_rows) {
  for (int64_t r = 0; r < n_rows; ++r) add(x + r * n, bias, n);
}

void scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void softmax(float* x, int64_t n) {
  float max_v = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max_v = x[i] > max_v ? x[i] : max_v;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_v);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

namespace {

// ggml_rope_yarn_corr_dims, in float as ggml computes it (floor and ceil make its rounding matter):
// the pairs below dims[0] turn more than beta_fast times in n_ctx_orig positions (kept as they
// are), those above dims[1] fewer than beta_slow times (interpolated).
void yarn_corr_dims(const RopeParams& p, float dims[2]) {
  auto corr_dim = [&](float n_turns) {
    return static_cast<float>(p.n_rot) * std::log(static_cast<float>(p.n_ctx_orig) / (n_turns * 2 * 3.14159265358979323846f)) /
           (2 * std::log(p.freq_base));
  };
  dims[0] = std::max(0.0f, std::floor(corr_dim(p.beta_fast)));
  dims[1] = std::min(static_cast<float>(p.n_rot - 1), std::ceil(corr_dim(p.beta_slow)));
}

// Rotates pair (a, b) of every head of one token by (c, s).
inline void rotate_heads(float* x, int n_heads, int head_dim, int a, int b, float c, float s) {
  for (int h = 0; h < n_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    const float x0 = head[a], x1 = head[b];
    head[a] = x0 * c - x1 * s;
    head[b] = x0 * s + x1 * c;
  }
}

}  // namespace

float rope_mscale(const RopeParams& p) {
  return p.ext_factor != 0.0f ? p.attn_factor * (1.0f + 0.1f * std::log(1.0f / p.freq_scale)) : p.attn_factor;
}

void rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int64_t pos0, const RopeParams& p) {
  const int half = p.n_rot / 2;
  // base^(-2i/n_rot) per pair, computed once per call rather than per token (a prompt's RoPE
  // would otherwise spend most of its time in pow); the same double value either way.
  constexpr int kMaxCached = 256;
  double freq[kMaxCached];
  auto frequency = [&](int i) { return std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot); };
  for (int i = 0; i < half && i < kMaxCached; ++i) freq[i] = frequency(i);
  auto pair_a = [&](int i) { return p.style == RopeStyle::kNorm ? 2 * i : i; };
  auto pair_b = [&](int i) { return p.style == RopeStyle::kNorm ? 2 * i + 1 : i + half; };
  const int64_t row = static_cast<int64_t>(n_heads) * head_dim;
  if (p.ext_factor == 0.0f && p.attn_factor == 1.0f) {  // the plain rotation
    for (int64_t t = 0; t < n_tokens; ++t) {
      const double pos = static_cast<double>(pos0 + t) * p.freq_scale;
      for (int i = 0; i < half; ++i) {
        // theta_i = pos * base^(-2i/n_rot), divided by the llama3 frequency factor when present.
        double theta = pos * (i < kMaxCached ? freq[i] : frequency(i));
        if (p.freq_factors != nullptr) theta /= p.freq_factors[i];
        rotate_heads(x + t * row, n_heads, head_dim, pair_a(i), pair_b(i), static_cast<float>(std::cos(theta)),
                     static_cast<float>(std::sin(theta)));
      }
    }
    return;
  }
  // YaRN and/or a magnitude (ggml's rope_yarn): pair i's angle is the interpolated one
  // (freq_scale * theta) blended towards the original by ramp(i) * ext_factor.
  float dims[2] = {0, 0};
  if (p.ext_factor != 0.0f) yarn_corr_dims(p, dims);
  const float mscale = rope_mscale(p);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const double pos = static_cast<double>(pos0 + t);
    for (int i = 0; i < half; ++i) {
      double theta_extrap = pos * (i < kMaxCached ? freq[i] : frequency(i));
      if (p.freq_factors != nullptr) theta_extrap /= p.freq_factors[i];
      double theta = theta_extrap * p.freq_scale;
      if (p.ext_factor != 0.0f) {
        const float y = (static_cast<float>(i) - dims[0]) / std::max(0.001f, dims[1] - dims[0]);
        const double mix = static_cast<double>((1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor);
        theta = theta * (1.0 - mix) + theta_extrap * mix;
      }
      rotate_heads(x + t * row, n_heads, head_dim, pair_a(i), pair_b(i), static_cast<float>(std::cos(theta)) * mscale,
                   static_cast<float>(std::sin(theta)) * mscale);
    }
  }
}

}  // namespace ox
