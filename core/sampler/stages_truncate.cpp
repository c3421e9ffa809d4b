// The truncating stages (top-k, top-p, min-p, typical, top-n-sigma, XTC) and the shared softmax,
// each as llama.cpp's llama-sampler.cpp computes it (float sums where it uses float).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/sampler/stages.h"

namespace ox {

bool logit_order(const TokenCandidate& a, const TokenCandidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

void keep_top(Candidates& c, size_t k) {
  k = std::min(k, c.size);
  if (!c.sorted) {
    std::partial_sort(c.data, c.data + k, c.data + c.size, logit_order);
    c.sorted = true;
  }
  c.size = k;
}

void softmax(Candidates& c, bool sort) {
  if (c.size == 0) return;
  if (sort && !c.sorted) keep_top(c, c.size);
  float max_l = c.data[0].logit;
  if (!c.sorted) {
    for (size_t i = 1; i < c.size; ++i) max_l = std::max(max_l, c.data[i].logit);
  }
  float sum = 0.0f;
  for (size_t i = 0; i < c.size; ++i) {
    c.data[i].p = std::exp(c.data[i].logit - max_l);
    sum += c.data[i].p;
  }
  for (size_t i = 0; i < c.size; ++i) c.data[i].p /= sum;
}

// llama_sampler_top_k_impl
void apply_top_k(Candidates& c, int k) {
  if (k <= 0) return;
  keep_top(c, static_cast<size_t>(k));
}

// llama_sampler_top_p_apply: the smallest prefix (by probability) whose sum reaches p.
void apply_top_p(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.size == 0) return;
  softmax(c, /*sort=*/true);
  float cum = 0.0f;
  size_t last = c.size;
  for (size_t i = 0; i < c.size; ++i) {
    cum += c.data[i].p;
    if (cum >= p && i + 1 >= min_keep) {
      last = i + 1;
      break;
    }
  }
  c.size = last;
}

// llama_sampler_min_p_apply: keep p_i >= p * p_max, i.e. logit_i >= logit_max + log(p).
void apply_min_p(Candidates& c, float p, size_t min_keep) {
  if (p <= 0.0f || c.size == 0) return;
  if (!c.sorted) {
    // Unsorted: filter in place, keeping the order (llama.cpp's first path).
    float max_l = -INFINITY;
    for (size_t i = 0; i < c.size; ++i) max_l = std::max(max_l, c.data[i].logit);
    const float min_logit = max_l + std::log(p);
    size_t n_pass = 0;
    for (size_t i = 0; i < c.size; ++i) n_pass += c.data[i].logit >= min_logit ? 1 : 0;
    if (n_pass > 0 && n_pass >= min_keep) {
      size_t out = 0;
      for (size_t i = 0; i < c.size; ++i) {
        if (c.data[i].logit >= min_logit) c.data[out++] = c.data[i];
      }
      c.size = out;
      return;
    }
    keep_top(c, c.size);
  }
  const float min_logit = c.data[0].logit + std::log(p);
  size_t i = 1;  // the first always passes
  for (; i < c.size; ++i) {
    if (c.data[i].logit < min_logit && i >= min_keep) break;
  }
  c.size = i;
}

// llama_sampler_typical_apply (locally typical sampling): order by |-log p - H| and keep the
// shortest prefix of that order whose probabilities sum past p.
void apply_typical(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.size == 0) return;
  softmax(c, /*sort=*/true);
  float entropy = 0.0f;
  for (size_t i = 0; i < c.size; ++i) entropy += -c.data[i].p * std::log(c.data[i].p);
  std::vector<float> score(c.size);
  for (size_t i = 0; i < c.size; ++i) score[i] = std::fabs(-std::log(c.data[i].p) - entropy);
  std::vector<size_t> order(c.size);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return score[a] < score[b] || (score[a] == score[b] && a < b); });
  float cum = 0.0f;
  size_t last = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    cum += c.data[order[i]].p;
    if (cum > p && (min_keep == 0 || i >= min_keep - 1)) {
      last = i + 1;
      break;
    }
  }
  std::vector<TokenCandidate> kept(last);
  for (size_t i = 0; i < last; ++i) kept[i] = c.data[order[i]];
  std::copy(kept.begin(), kept.end(), c.data);
  c.size = last;
  c.sorted = false;
}

// llama_sampler_top_n_sigma_apply: mask logits below max - n * std (over the finite ones).
void apply_top_n_sigma(Candidates& c, float n) {
  if (n <= 0.0f || c.size <= 1) return;
  float max_l = c.data[0].logit;
  float sum = 0.0f;
  size_t n_valid = 0;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.data[i].logit != -INFINITY) {
      max_l = std::max(max_l, c.data[i].logit);
      sum += c.data[i].logit;
      ++n_valid;
    }
  }
  const float mean = n_valid > 0 ? sum / static_cast<float>(n_valid) : 0.0f;
  float acc = 0.0f;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.data[i].logit != -INFINITY) acc += static_cast<float>(std::pow(c.data[i].logit - mean, 2));
  }
  const float sd = n_valid > 0 ? std::sqrt(acc / static_cast<float>(n_valid)) : 0.0f;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.data[i].logit < max_l - n * sd) c.data[i].logit = -INFINITY;
  }
}

// llama_sample_xtc_apply ("exclude top choices").
void apply_xtc(Candidates& c, float probability, float threshold, size_t min_keep, Rng& rng) {
  if (probability <= 0.0f || threshold > 0.5f || c.size < 2) return;
  const float chance = static_cast<float>(rng.uniform());
  if (chance > probability) return;
  softmax(c, /*sort=*/true);
  size_t pos_last = 0;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.data[i].p >= threshold) {
      pos_last = i;
    } else {
      break;
    }
  }
  if (c.size - pos_last >= min_keep && pos_last > 0) {
    c.data += pos_last;
    c.size -= pos_last;
  }
}

}  // namespace ox
