// Importance-aware quantizers of IQ2_XXS, IQ2_XS and IQ2_S, following llama.cpp's
// quantize_row_iq2_{xxs,xs,s}_impl step for step: the same float operations in the same order, so
// ordinary data gives llama.cpp's bytes exactly (tests/core/quant/iq2_reference_test.cpp). Where
// llama.cpp would abort (a point left off the codebook) or overflow, we stay defined instead.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {
namespace {

// The quantizer works with levels l = 0..kMaxQ-1 per element, standing for magnitudes 2l + 1 (the
// codebook bytes 8, 25, 43 are ~8.5 times 1, 3, 5).
constexpr int kMaxQ = 3;
constexpr float kGroupMaxEpsIQ2S = 1e-8f;  // IQ2_S treats smaller groups as zero (others kGroupMaxEps)
// Packed level vectors u (2 bits per element) with levels 0..2 are at most 0xAAAA (llama.cpp's
// kmap_size is this too).
constexpr int kMapSize = 0xAAAA + 2;

// A codebook as the quantizer searches it (llama.cpp's iq2xs_init_impl). map[u] is the entry whose
// levels pack to u, or -(1 + offset) of u's neighbour list in `neighbours`: a count, then the
// entries at the `n_want` smallest distinct squared distances from u, by distance then index.
struct Codebook {
  std::vector<std::array<int8_t, 8>> points;  // 2l + 1 per element
  std::vector<int32_t> map;
  std::vector<uint16_t> neighbours;
};

int level_of(int grid_byte) { return grid_byte == 8 ? 0 : grid_byte == 25 ? 1 : 2; }

bool levels_in_range(int u) {
  for (int j = 0; j < 8; ++j) {
    if (((u >> (2 * j)) & 3) >= kMaxQ) return false;
  }
  return true;
}

// Neighbour lists only for the points the search can produce (levels 0..2; llama.cpp also builds
// them for level 3, which rounding never yields): the same lists, a seventh of the work.
Codebook build_codebook(const uint64_t* grid, int size, int n_want) {
  Codebook c;
  c.points.resize(static_cast<size_t>(size));
  c.map.assign(kMapSize, -1);
  for (int i = 0; i < size; ++i) {
    int u = 0;
    for (int j = 0; j < 8; ++j) {
      const int l = level_of(iq2_grid_value(grid[i], j));
      c.points[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<int8_t>(2 * l + 1);
      u |= l << (2 * j);
    }
    c.map[static_cast<size_t>(u)] = i;
  }
  constexpr int kMaxDist = 8 * 16;  // (5 - 1)^2 per element
  std::vector<int> dist(static_cast<size_t>(size));
  for (int u = 0; u < kMapSize; ++u) {
    if (c.map[static_cast<size_t>(u)] >= 0 || !levels_in_range(u)) continue;
    bool present[kMaxDist + 1] = {};
    for (int i = 0; i < size; ++i) {
      int d2 = 0;
      for (int j = 0; j < 8; ++j) {
        const int diff = c.points[static_cast<size_t>(i)][static_cast<size_t>(j)] - (2 * ((u >> (2 * j)) & 3) + 1);
        d2 += diff * diff;
      }
      dist[static_cast<size_t>(i)] = d2;
      present[d2] = true;
    }
    c.map[static_cast<size_t>(u)] = -(1 + static_cast<int32_t>(c.neighbours.size()));
    const size_t count_at = c.neighbours.size();
    c.neighbours.push_back(0);
    int have = 0;
    for (int d2 = 0; d2 <= kMaxDist && have < n_want; ++d2) {
      if (!present[d2]) continue;
      ++have;
      for (int i = 0; i < size; ++i) {
        if (dist[static_cast<size_t>(i)] == d2) c.neighbours.push_back(static_cast<uint16_t>(i));
      }
    }
    c.neighbours[count_at] = static_cast<uint16_t>(c.neighbours.size() - count_at - 1);
  }
  return c;
}

// Built on first use (thread-safe static initialisation): 10-80 ms each (llama.cpp's
// iq2xs_init_impl takes seconds on one thread).
const Codebook& codebook_iq2_xxs() {
  static const Codebook c = build_codebook(kIQ2XXSGrid, 256, 2);
  return c;
}
const Codebook& codebook_iq2_xs() {
  static const Codebook c = build_codebook(kIQ2XSGrid, 512, 2);
  return c;
}
const Codebook& codebook_iq2_s() {
  static const Codebook c = build_codebook(kIQ2SGrid, 1024, 1);
  return c;
}

// llama.cpp's MAX(a, b) (NaN and -0 handling included).
float max_of(float a, float b) { return a > b ? a : b; }

int packed_levels(const int8_t* L) {
  int u = 0;
  for (int j = 0; j < 8; ++j) u |= L[j] << (2 * j);
  return u;
}

// The neighbour of off-codebook point u with the least weighted error sum w (scale q - x)^2 (the
// first on ties); writes its levels to L and returns its index.
int best_neighbour(const Codebook& c, int u, const float* xval, const float* weight, float scale, int8_t* L) {
  const uint16_t* nb = c.neighbours.data() + (-c.map[static_cast<size_t>(u)] - 1);
  float best_d2 = FLT_MAX;
  int best = nb[1];  // stays only if every error is NaN (llama.cpp asserts there)
  for (int k = 1; k <= nb[0]; ++k) {
    const int8_t* pg = c.points[nb[k]].data();
    float d2 = 0;
    for (int i = 0; i < 8; ++i) {
      const float diff = scale * static_cast<float>(pg[i]) - xval[i];
      d2 += weight[i] * diff * diff;
    }
    if (d2 < best_d2) {
      best_d2 = d2;
      best = nb[k];
    }
  }
  const int8_t* pg = c.points[static_cast<size_t>(best)].data();
  for (int i = 0; i < 8; ++i) L[i] = static_cast<int8_t>((pg[i] - 1) / 2);
  return best;
}

// Codebook index of levels L (an entry's levels after every search path; should a NaN input leave
// them off the codebook, where llama.cpp aborts, the nearest entry stands in).
int codebook_index(const Codebook& c, const int8_t* L) {
  const int u = packed_levels(L);
  const int32_t m = c.map[static_cast<size_t>(u)];
  return m >= 0 ? m : c.neighbours[static_cast<size_t>(-m - 1) + 1];
}

// Levels of one octet at inverse scale id: round((x id - 1) / 2) into 0..2, snapped to the best
// neighbour (error weights `waux`, at `scale`) when that point is not in the codebook.
bool round_octet(const Codebook& c, const float* xval, const float* waux, float id, float scale, int8_t* L) {
  for (int i = 0; i < 8; ++i) L[i] = static_cast<int8_t>(round_clamp(0.5f * (id * xval[i] - 1), 0, kMaxQ - 1));
  const int u = packed_levels(L);
  if (c.map[static_cast<size_t>(u)] >= 0) return true;
  best_neighbour(c, u, xval, waux, scale, L);
  return false;
}

// Weighted least-squares scale for levels L: sum(w x q) / sum(w q^2) with q = 2l + 1. Returns
// sumqx and sets *sumq2.
float level_sums(int n, const float* xval, const float* weight, const int8_t* L, float* sumq2) {
  float sumqx = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const float w = weight[i];
    const float q = static_cast<float>(2 * L[i] + 1);
    sumqx += w * xval[i] * q;
    s2 += w * q * q;
  }
  *sumq2 = s2;
  return sumqx;
}

// The scale search of all three formats over a group of n (16 or 32) magnitudes: inverse scales
// (2 kMaxQ - 1 + 0.1 is) / max_ref for |is| <= n_steps, levels per octet by round_octet, keeping the
// candidate with the largest sumqx^2 / sumq2 (least weighted error). Then the octets are rounded
// again at the chosen scale (all of them, or only those that had been off the codebook) and the
// scale refitted. `scale` and L come in as the fallback when no candidate fits; returns the scale.
float search_scale(const Codebook& c, int n, const float* xval, const float* weight, const float* waux,
                   float max_ref, float scale, int n_steps, bool refine_all, int8_t* L) {
  const int n_octets = n / 8;
  int8_t Laux[32];
  bool on_grid[4] = {true, true, true, true}, on_grid_aux[4];
  float best = 0;
  for (int is = -n_steps; is <= n_steps; ++is) {
    const float id = (2 * kMaxQ - 1 + static_cast<float>(is) * 0.1f) / max_ref;
    const float this_scale = 1 / id;
    for (int k = 0; k < n_octets; ++k) {
      on_grid_aux[k] = round_octet(c, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k);
    }
    float sumq2;
    const float sumqx = level_sums(n, xval, weight, Laux, &sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::memcpy(L, Laux, static_cast<size_t>(n));
      std::memcpy(on_grid, on_grid_aux, sizeof(on_grid));
    }
  }
  bool refine = refine_all;
  for (int k = 0; k < n_octets; ++k) refine = refine || !on_grid[k];
  if (!refine || !(scale > 0)) return scale;
  const float id = 1 / scale;
  for (int k = 0; k < n_octets; ++k) {
    if (refine_all || !on_grid[k]) round_octet(c, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k);
  }
  float sumq2;
  const float sumqx = level_sums(n, xval, weight, L, &sumq2);
  return sumq2 > 0 ? sumqx / sumq2 : scale;
}

// IQ2_XXS / IQ2_XS store 7 signs per octet; the 8th is implied (an even count of negatives). With an
// odd count, the element whose flip costs least (weight x^2) is fitted with the wrong sign: its
// magnitude enters the search negated. Writes the magnitudes to xval; returns the 7 stored bits.
uint8_t split_signs_even(const float* xb, const float* weight, float* xval) {
  int nflip = 0;
  uint8_t s = 0;
  for (int i = 0; i < 8; ++i) {
    xval[i] = xb[i] >= 0 ? xb[i] : -xb[i];
    if (!(xb[i] >= 0)) {
      ++nflip;
      s = static_cast<uint8_t>(s | (1 << i));
    }
  }
  if (nflip % 2) {
    int imin = 0;
    float min = weight[0] * xb[0] * xb[0];
    for (int i = 1; i < 8; ++i) {
      const float ax = weight[i] * xb[i] * xb[i];
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    xval[imin] = -xval[imin];
    s = static_cast<uint8_t>(s ^ (1 << imin));
  }
  return s & 127;
}

// IQ2_S stores all 8 signs.
uint8_t split_signs(const float* xb, float* xval) {
  uint8_t s = 0;
  for (int i = 0; i < 8; ++i) {
    xval[i] = xb[i] >= 0 ? xb[i] : -xb[i];
    if (!(xb[i] >= 0)) s = static_cast<uint8_t>(s | (1 << i));
  }
  return s;
}

float group_max(const float* xval, int n) {
  float max = xval[0];
  for (int i = 1; i < n; ++i) max = max_of(max, xval[i]);
  return max;
}

// A super-block scaled by 2^-e to max|x| in [0.5, 1): exact, so the search runs on the same numbers
// up to that power of two (and gives llama.cpp's bytes), while huge or tiny inputs cannot overflow
// or underflow its squares. Group thresholds compare the unscaled magnitude, ldexp(max, e).
struct Normalized {
  explicit Normalized(const float* x) : e(group_exponent(x, kQK_K)) {
    scale_pow2(x, v, kQK_K, e);
    for (float t : v) sumx2 += t * t;
  }
  float v[kQK_K];
  int e;
  float sumx2 = 0;
};

// 4-bit group scale: d (0.5 + ls) ~= scale with d = max_scale / 31.
uint32_t scale_nibble(float id, float scale) { return static_cast<uint32_t>(round_clamp(0.5f * (id * scale - 1), 0, 15)); }

void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// llama.cpp's error weights for a group of n: importance * sqrt(sigma2 + x^2), or without
// importance (IQ2_S only) sigma2 / 4 + x^2; and their square roots for the neighbour search.
void group_weights(const float* xb, const float* qw, float sigma2, int n, float* weight, float* waux) {
  for (int i = 0; i < n; ++i) {
    weight[i] = qw != nullptr ? qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]) : 0.25f * sigma2 + xb[i] * xb[i];
  }
  for (int i = 0; i < n; ++i) waux[i] = std::sqrt(weight[i]);
}

// Groups of 32 (4 octets), 7-bit signs, search started from make_qp_quants' scale, |is| <= 6, every
// octet re-rounded at the end.
void quantize_block_iq2_xxs(const float* x, const float* qw, BlockIQ2_XXS* y) {
  const Codebook& c = codebook_iq2_xxs();
  const Normalized xbl(x);
  const float sigma2 = xbl.sumx2 / kQK_K;
  float scales[kQK_K / 32];
  uint32_t q2[kQK_K / 16] = {};
  float max_scale = 0;
  for (int ib = 0; ib < kQK_K / 32; ++ib) {
    const float* xb = xbl.v + 32 * ib;
    float weight[32], waux[32], xval[32];
    int8_t L[32] = {};
    uint8_t signs[4];
    group_weights(xb, qw + 32 * ib, sigma2, 32, weight, waux);
    for (int k = 0; k < 4; ++k) signs[k] = split_signs_even(xb + 8 * k, weight + 8 * k, xval + 8 * k);
    scales[ib] = 0;
    if (std::ldexp(group_max(xval, 32), xbl.e) < kGroupMaxEps) continue;
    // make_qp_quants' scale (fit_unsigned; xval >= 0 but for the parity-flipped element, whose
    // negative level wraps in uint8_t as in llama.cpp).
    uint8_t Lqp[32];
    float scale = fit_unsigned(32, kMaxQ + 1, xval, weight, Lqp);
    const float eff_max = scale * kMaxQ;
    if (eff_max <= 0) continue;
    scale = search_scale(c, 32, xval, weight, waux, eff_max, scale, 6, true, L);
    if (scale < 0) {  // never expected; the stored scale is unsigned, so the signs take the flip
      scale = -scale;
      for (uint8_t& s : signs) s = static_cast<uint8_t>(~s & 127);
    }
    for (int k = 0; k < 4; ++k) {
      q2[2 * ib] |= static_cast<uint32_t>(codebook_index(c, L + 8 * k)) << (8 * k);
      q2[2 * ib + 1] |= static_cast<uint32_t>(signs[k]) << (7 * k);
    }
    scales[ib] = scale;
    max_scale = max_of(max_scale, scale);
  }
  std::memset(y, 0, sizeof(*y));
  if (max_scale == 0) return;
  const float d = max_scale / 31;
  y->d = fp16_saturate(std::ldexp(d, xbl.e));
  const float id = 1 / d;
  for (int ib = 0; ib < kQK_K / 32; ++ib) q2[2 * ib + 1] |= scale_nibble(id, scales[ib]) << 28;
  uint8_t* qs = reinterpret_cast<uint8_t*>(y->qs);
  for (int i = 0; i < kQK_K / 16; ++i) store_u32(qs + 4 * i, q2[i]);
}

// Octet i8's codebook index and signs into its place in the block.
void store_octet(BlockIQ2_XS* y, int i8, int index, uint8_t signs) {
  y->qs[i8] = static_cast<uint16_t>(index | signs << 9);
}
void store_octet(BlockIQ2_S* y, int i8, int index, uint8_t signs) {
  y->qs[i8] = static_cast<uint8_t>(index & 255);
  y->qh[i8 / 4] = static_cast<uint8_t>(y->qh[i8 / 4] | (index >> 8) << (2 * (i8 % 4)));
  y->qs[kQK_K / 8 + i8] = signs;
}

// IQ2_XS and IQ2_S: groups of 16 (2 octets), search from max / 5 with |is| <= 9, off-codebook
// octets re-rounded at the end. IQ2_S differs in its 1024-entry codebook, 8 stored signs, sigma2
// twice as large, importance optional, a larger zero threshold and d stored 1.25% low.
template <class Block>
void quantize_block_16(const float* x, const float* qw, Block* y) {
  constexpr bool kS = std::is_same_v<Block, BlockIQ2_S>;
  const Codebook& c = kS ? codebook_iq2_s() : codebook_iq2_xs();
  const Normalized xbl(x);
  const float sigma2 = (kS ? 2 * xbl.sumx2 : xbl.sumx2) / kQK_K;
  std::memset(y, 0, sizeof(*y));
  float scales[kQK_K / 16];
  float max_scale = 0;
  for (int ib = 0; ib < kQK_K / 16; ++ib) {
    const float* xb = xbl.v + 16 * ib;
    float weight[16], waux[16], xval[16];
    int8_t L[16] = {};
    uint8_t signs[2];
    group_weights(xb, qw != nullptr ? qw + 16 * ib : nullptr, sigma2, 16, weight, waux);
    for (int k = 0; k < 2; ++k) {
      signs[k] = kS ? split_signs(xb + 8 * k, xval + 8 * k) : split_signs_even(xb + 8 * k, weight + 8 * k, xval + 8 * k);
    }
    scales[ib] = 0;
    const float max = group_max(xval, 16);
    if (std::ldexp(max, xbl.e) < (kS ? kGroupMaxEpsIQ2S : kGroupMaxEps)) continue;
    float scale = search_scale(c, 16, xval, weight, waux, max, max / (2 * kMaxQ - 1), 9, false, L);
    if (scale < 0) {
      scale = -scale;
      for (uint8_t& s : signs) s = static_cast<uint8_t>(~s & (kS ? 255 : 127));
    }
    for (int k = 0; k < 2; ++k) store_octet(y, 2 * ib + k, codebook_index(c, L + 8 * k), signs[k]);
    scales[ib] = scale;
    max_scale = max_of(max_scale, scale);
  }
  if (max_scale == 0) {
    if (!kS) std::memset(y->qs, 0, sizeof(y->qs));  // llama.cpp keeps IQ2_S's octets, clears IQ2_XS's
    return;
  }
  const float d = max_scale / 31;
  y->d = fp16_saturate(std::ldexp(kS ? d * 0.9875f : d, xbl.e));
  const float id = 1 / d;
  for (int ib = 0; ib < kQK_K / 16; ++ib) y->scales[ib / 2] |= static_cast<uint8_t>(scale_nibble(id, scales[ib]) << (4 * (ib % 2)));
}

// Rows of n_per_row; importance (n_per_row weights, or null) is indexed by column.
template <class Block, void (*kQuantizeBlock)(const float*, const float*, Block*)>
void quantize_rows_of(const float* x, void* vy, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(n_per_row % kQK_K == 0);
  Block* y = static_cast<Block*>(vy);
  const int64_t nb = n_per_row / kQK_K;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      kQuantizeBlock(x + r * n_per_row + b * kQK_K, importance != nullptr ? importance + b * kQK_K : nullptr, y + r * nb + b);
    }
  }
}

}  // namespace

void quantize_rows_iq2_xxs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(importance != nullptr);  // needs_importance: callers check
  quantize_rows_of<BlockIQ2_XXS, quantize_block_iq2_xxs>(x, y, n_rows, n_per_row, importance);
}

void quantize_rows_iq2_xs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(importance != nullptr);
  quantize_rows_of<BlockIQ2_XS, quantize_block_16<BlockIQ2_XS>>(x, y, n_rows, n_per_row, importance);
}

void quantize_rows_iq2_s(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_of<BlockIQ2_S, quantize_block_16<BlockIQ2_S>>(x, y, n_rows, n_per_row, importance);
}

void quantize_iq2_s(const float* x, void* y, int64_t n) { quantize_rows_iq2_s(x, y, 1, n, nullptr); }

}  // namespace ox::quant
