// The grid i-quants' search tables: key -> grid point, and neighbour lists for keys off the grid
// (llama.cpp's kmap_q3xs / kneighbors_q3xs and kmap_q2xs / kneighbors_q2xs, same contents and order).
#include "core/quant/iq_grid_search.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>

#include "core/base/status.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

constexpr int32_t kNoList = std::numeric_limits<int32_t>::min();

}  // namespace

IqGridSearch::IqGridSearch(int n_dim, int bits, std::vector<uint8_t> levels, int max_level, int n_want)
    : n_dim_(n_dim), bits_(bits), levels_(std::move(levels)), map_(size_t{1} << (n_dim * bits), kNoList) {
  const int n = n_grid();
  for (int g = 0; g < n; ++g) {
    int8_t l[8];
    for (int k = 0; k < n_dim_; ++k) l[k] = static_cast<int8_t>(level(g, k));
    map_[key(l)] = g;
  }
  const uint32_t mask = (1u << bits_) - 1;
  std::vector<int> d2(static_cast<size_t>(n));
  for (uint32_t u = 0; u < map_.size(); ++u) {
    if (map_[u] != kNoList) continue;
    bool reachable = true;
    for (int k = 0; k < n_dim_; ++k) reachable = reachable && static_cast<int>((u >> (bits_ * k)) & mask) <= max_level;
    if (!reachable) continue;
    for (int g = 0; g < n; ++g) {
      int s = 0;
      for (int k = 0; k < n_dim_; ++k) {
        const int diff = 2 * (level(g, k) - static_cast<int>((u >> (bits_ * k)) & mask));  // odd values 2l+1
        s += diff * diff;
      }
      d2[static_cast<size_t>(g)] = s;
    }
    // Every point at the n_want smallest distinct distances, by distance then index (llama.cpp
    // sorts (distance, index) pairs and stops at the (n_want + 1)-th distinct distance).
    map_[u] = -static_cast<int32_t>(lists_.size()) - 1;
    const size_t count_at = lists_.size();
    lists_.push_back(0);
    int previous = -1;
    for (int have = 0; have < n_want; ++have) {
      int next = std::numeric_limits<int>::max();
      for (int v : d2) {
        if (v > previous) next = std::min(next, v);
      }
      if (next == std::numeric_limits<int>::max()) break;
      for (int g = 0; g < n; ++g) {
        if (d2[static_cast<size_t>(g)] == next) lists_.push_back(static_cast<uint16_t>(g));
      }
      previous = next;
    }
    lists_[count_at] = static_cast<uint16_t>(lists_.size() - count_at - 1);
  }
}

uint32_t IqGridSearch::key(const int8_t* l) const {
  uint32_t u = 0;
  for (int k = 0; k < n_dim_; ++k) u |= static_cast<uint32_t>(l[k]) << (bits_ * k);
  return u;
}

int IqGridSearch::grid_index(uint32_t key) const {
  OX_CHECK(key < map_.size());
  return map_[key] >= 0 ? map_[key] : -1;
}

std::span<const uint16_t> IqGridSearch::neighbours(uint32_t key) const {
  OX_CHECK(key < map_.size() && map_[key] < 0 && map_[key] != kNoList);
  const size_t offset = static_cast<size_t>(-(map_[key] + 1));
  return {lists_.data() + offset + 1, lists_[offset]};
}

int IqGridSearch::best_neighbour(uint32_t key, const float* x, const float* w, float scale, const float* values,
                                 int8_t* L) const {
  const std::span<const uint16_t> candidates = neighbours(key);
  float best_d2 = FLT_MAX;
  int best = candidates[0];
  for (uint16_t g : candidates) {
    float d2 = 0.0f;
    for (int i = 0; i < n_dim_; ++i) {
      const float diff = scale * values[level(g, i)] - x[i];
      d2 += w[i] * diff * diff;
    }
    if (d2 < best_d2) {
      best_d2 = d2;
      best = g;
    }
  }
  for (int i = 0; i < n_dim_; ++i) L[i] = static_cast<int8_t>(level(best, i));
  return best;
}

void iq_scale_super_block(const float* x, IqScaledBlock* s) {
  s->e = group_exponent(x, 256);
  scale_pow2(x, s->x, 256, s->e);
  float sumx2 = 0.0f;
  for (int i = 0; i < 256; ++i) sumx2 += s->x[i] * s->x[i];
  s->sigma2 = 2 * sumx2 / 256;
}

void iq_error_weights(const float* x, const float* importance, float sigma2, int n, float* w) {
  for (int i = 0; i < n; ++i) w[i] = importance ? importance[i] * std::sqrt(sigma2 + x[i] * x[i]) : x[i] * x[i];
}

const IqGridSearch& iq3xxs_grid_search() {
  // kIQ3XXSGrid bytes are 4 * (2l + 1) for levels 0..6 and 62 for level 7.
  static const IqGridSearch search = [] {
    std::vector<uint8_t> levels(256 * 4);
    for (int g = 0; g < 256; ++g) {
      for (int k = 0; k < 4; ++k) {
        const int v = iq3_grid_byte(kIQ3XXSGrid[g], k);
        levels[4 * g + k] = static_cast<uint8_t>(v == 62 ? 7 : (v / 4 - 1) / 2);
      }
    }
    return IqGridSearch(4, 3, std::move(levels), 7, 2);
  }();
  return search;
}

const IqGridSearch& iq3s_grid_search() {
  static const IqGridSearch search = [] {  // kIQ3SGrid bytes are 2l + 1
    std::vector<uint8_t> levels(512 * 4);
    for (int g = 0; g < 512; ++g) {
      for (int k = 0; k < 4; ++k) levels[4 * g + k] = static_cast<uint8_t>((iq3_grid_byte(kIQ3SGrid[g], k) - 1) / 2);
    }
    return IqGridSearch(4, 3, std::move(levels), 7, 3);
  }();
  return search;
}

const IqGridSearch& iq1s_grid_search() {
  static const IqGridSearch search = [] {  // kIQ1SGrid values -1, 0, 1 are levels 0, 1, 2
    std::vector<uint8_t> levels(2048 * 8);
    for (int g = 0; g < 2048; ++g) {
      for (int k = 0; k < 8; ++k) levels[8 * g + k] = static_cast<uint8_t>(iq1_grid_value(kIQ1SGrid[g], k) + 1);
    }
    return IqGridSearch(8, 2, std::move(levels), 2, 3);
  }();
  return search;
}

}  // namespace ox::quant
