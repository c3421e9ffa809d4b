// Temperature (plain and dynamic) and the stages that pick the token: the distribution draw and
// Mirostat 1.0 / 2.0, as llama.cpp's llama-sampler.cpp computes them (our Rng for the draws).
#include <algorithm>
#include <cmath>

#include "core/sampler/stages.h"

namespace ox {
namespace {

// llama_sampler_temp_impl
void scale_by_temperature(Candidates& c, float temp) {
  if (c.size == 0) return;
  if (temp <= 0.0f) {
    // Keep only the largest logit (the first of equal ones in the current order).
    size_t max_i = 0;
    for (size_t i = 1; i < c.size; ++i) {
      if (c.data[i].logit > c.data[max_i].logit) {
        c.data[max_i].logit = -INFINITY;
        max_i = i;
      } else {
        c.data[i].logit = -INFINITY;
      }
    }
    return;
  }
  for (size_t i = 0; i < c.size; ++i) c.data[i].logit /= temp;
}

// One draw from the normalised probabilities (llama_sample_dist); never a token with p == 0.
int32_t draw_index(const Candidates& c, Rng& rng) {
  const double r = rng.uniform();
  double cum = 0;
  int32_t last_positive = -1;
  for (size_t i = 0; i < c.size; ++i) {
    if (!(c.data[i].p > 0.0f)) continue;
    cum += c.data[i].p;
    last_positive = static_cast<int32_t>(i);
    if (r < cum) return last_positive;
  }
  return last_positive;
}

}  // namespace

void apply_temperature(Candidates& c, float temp, float range, float exponent) {
  if (!(range > 0.0f)) {
    scale_by_temperature(c, temp);
    return;
  }
  if (c.size <= 1) return;
  const float min_temp = std::max(0.0f, temp - range);
  const float max_temp = temp + range;
  const float max_entropy = -std::log(1.0f / static_cast<float>(c.size));
  softmax(c, /*sort=*/true);
  float entropy = 0.0f;
  for (size_t i = 0; i < c.size; ++i) {
    const float p = c.data[i].p;
    if (p > 0.0f) entropy -= p * std::log(p);
  }
  const float normalized = entropy / max_entropy;
  const float dyn_temp = min_temp + (max_temp - min_temp) * std::pow(normalized, exponent);
  scale_by_temperature(c, dyn_temp);
  // Probabilities again at the new temperature, in double (as llama.cpp does here).
  const double max_l = c.data[0].logit;
  double sum = 0.0;
  for (size_t i = 0; i < c.size; ++i) {
    const double p = std::exp(c.data[i].logit - max_l);
    c.data[i].p = static_cast<float>(p);
    sum += p;
  }
  for (size_t i = 0; i < c.size; ++i) c.data[i].p = static_cast<float>(c.data[i].p / sum);
}

// llama_sampler_dist_apply: p_i = exp(l_i - max) / sum, then the first i whose running sum
// reaches sum * r.
void select_dist(Candidates& c, Rng& rng) {
  c.selected = -1;
  if (c.size == 0) return;
  if (c.size == 1) {
    rng.uniform();  // one draw per token whatever the list, as llama.cpp
    c.data[0].p = 1.0f;
    c.selected = 0;
    return;
  }
  float max_l = c.data[0].logit;
  if (!c.sorted) {
    for (size_t i = 1; i < c.size; ++i) max_l = std::max(max_l, c.data[i].logit);
  }
  const double r = rng.uniform();
  if (max_l == -INFINITY || std::isnan(max_l)) return;
  double sum = 0.0;
  for (size_t i = 0; i < c.size; ++i) {
    c.data[i].p = std::exp(c.data[i].logit - max_l);
    sum += c.data[i].p;
  }
  const double target = sum * r;
  double running = 0.0;
  for (size_t i = 0; i < c.size; ++i) {
    running += c.data[i].p;
    if (c.selected < 0 && c.data[i].p > 0.0f && running >= target) c.selected = static_cast<int32_t>(i);
    c.data[i].p = static_cast<float>(c.data[i].p / sum);
  }
  if (c.selected < 0) {  // rounding left the target past the sum: the last possible token
    for (size_t i = c.size; i-- > 0;) {
      if (c.data[i].p > 0.0f) {
        c.selected = static_cast<int32_t>(i);
        break;
      }
    }
  }
}

// llama_sampler_mirostat_apply: estimate the Zipf exponent s from the top m probabilities, pick
// k so that the expected surprise is mu, sample from the top k.
void select_mirostat(Candidates& c, float tau, float eta, int m, int32_t n_vocab, float* mu, Rng& rng) {
  c.selected = -1;
  if (c.size == 0) return;
  softmax(c, /*sort=*/true);
  float sum_ti_bi = 0.0f;
  float sum_ti_sq = 0.0f;
  for (size_t i = 0; i + 1 < static_cast<size_t>(m) && i + 1 < c.size; ++i) {
    const float t_i = std::log(static_cast<float>(i + 2) / static_cast<float>(i + 1));
    const float b_i = std::log(c.data[i].p / c.data[i + 1].p);
    sum_ti_bi += t_i * b_i;
    sum_ti_sq += t_i * t_i;
  }
  const float s_hat = sum_ti_bi / sum_ti_sq;
  const float epsilon_hat = s_hat - 1;
  const float k = std::pow((epsilon_hat * std::pow(2.0f, *mu)) /
                               (1 - std::pow(static_cast<float>(n_vocab), -epsilon_hat)),
                           1 / s_hat);
  // llama.cpp converts k with int(k); NaN (one candidate) and huge k are clamped here instead.
  const size_t top = !(k >= 1.0f) ? 1 : k >= static_cast<float>(c.size) ? c.size : static_cast<size_t>(k);
  keep_top(c, top);
  softmax(c, /*sort=*/true);
  c.selected = draw_index(c, rng);
  if (c.selected < 0) return;
  const float surprise = -std::log2(c.data[c.selected].p);
  *mu -= eta * (surprise - tau);
}

// llama_sampler_mirostat_v2_apply: drop the tokens whose surprise exceeds mu, sample the rest.
void select_mirostat_v2(Candidates& c, float tau, float eta, float* mu, Rng& rng) {
  c.selected = -1;
  if (c.size == 0) return;
  softmax(c, /*sort=*/true);
  size_t keep = 0;
  while (keep < c.size && !(-std::log2(c.data[keep].p) > *mu)) ++keep;
  c.size = std::max<size_t>(keep, 1);
  softmax(c, /*sort=*/true);
  c.selected = draw_index(c, rng);
  if (c.selected < 0) return;
  const float surprise = -std::log2(c.data[c.selected].p);
  *mu -= eta * (surprise - tau);
}

}  // namespace ox
