// Scalar references of IQ3_XXS and IQ3_S (super-blocks of 256 = 8 sub-blocks of 32; each group of
// 4 magnitudes is one codebook entry, signs stored apart; layouts in blocks.h). The quantizers
// follow llama.cpp's quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl step for step, on each
// super-block scaled by a power of two (exact; see scale_search.h) so that extreme inputs stay finite.
#include <cmath>
#include <cstring>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/iq_grid_search.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

constexpr int kMaxQ = 8;  // levels 0..7, values 2l + 1

float grid_sign(uint8_t signs, int j) { return ((signs >> j) & 1) ? -1.0f : 1.0f; }
int grid_sign_int(uint8_t signs, int j) { return ((signs >> j) & 1) ? -1 : 1; }

uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// 9-bit IQ3_S grid index of group l (0..7) of a sub-block whose high bits are qh.
int iq3s_index(const uint8_t* qs, uint8_t qh, int l) { return qs[l] | (((qh >> l) & 1) << 8); }

// The quantizers' values 2l + 1 of levels 0..7.
constexpr float kOddValues[kMaxQ] = {1, 3, 5, 7, 9, 11, 13, 15};

// Levels of a group of 4 for inverse scale id: on the grid, or its best neighbour at scale 1/id.
bool pick_group(const IqGridSearch& gs, const float* xval, const float* waux, float id, float scale, int8_t* L) {
  for (int i = 0; i < 4; ++i) L[i] = static_cast<int8_t>(round_clamp(0.5f * (id * xval[i] - 1), 0, kMaxQ - 1));
  const uint32_t key = gs.key(L);
  if (gs.grid_index(key) >= 0) return true;
  gs.best_neighbour(key, xval, waux, scale, kOddValues, L);
  return false;
}

// sum w x q and sum w q^2 over a sub-block of 32 with values q = 2L + 1.
void weighted_sums(const float* xval, const float* w, const int8_t* L, float* sumqx, float* sumq2) {
  *sumqx = 0.0f;
  *sumq2 = 0.0f;
  for (int i = 0; i < 32; ++i) {
    const float q = static_cast<float>(2 * L[i] + 1);
    *sumqx += w[i] * xval[i] * q;
    *sumq2 += w[i] * q * q;
  }
}

// The two IQ3 variants' differences in the sub-block search.
struct Iq3Search {
  const IqGridSearch& grid;
  int n_steps;          // candidate scales (2 kMaxQ - 1 + 0.2 is) / max for |is| <= n_steps
  bool refit_all;       // the final pass re-picks every group (IQ3_S), not only those off the grid
};

// Fits the 32 magnitudes xval (max > 0) to 8 grid groups: writes levels L, returns the scale.
float fit_sub_block(const Iq3Search& s, const float* xval, const float* w, const float* waux, float max, int8_t* L) {
  float best = 0.0f;
  float scale = max / (2 * kMaxQ - 1);
  bool on_grid[8];
  for (bool& b : on_grid) b = !s.refit_all;
  for (int is = -s.n_steps; is <= s.n_steps; ++is) {
    const float id = (2 * kMaxQ - 1 + static_cast<float>(is) * 0.2f) / max;
    const float this_scale = 1 / id;
    int8_t Laux[32];
    bool on_grid_aux[8];
    for (int k = 0; k < 8; ++k) on_grid_aux[k] = pick_group(s.grid, xval + 4 * k, waux + 4 * k, id, this_scale, Laux + 4 * k);
    float sumqx, sumq2;
    weighted_sums(xval, w, Laux, &sumqx, &sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::memcpy(L, Laux, 32);
      std::memcpy(on_grid, on_grid_aux, sizeof(on_grid));
    }
  }
  bool any_off_grid = false;
  for (bool b : on_grid) any_off_grid = any_off_grid || !b;
  if (any_off_grid && scale > 0) {
    // Re-pick the groups at the fitted scale, then refit the scale.
    const float id = 1 / scale;
    for (int k = 0; k < 8; ++k) {
      if (!s.refit_all && on_grid[k]) continue;
      pick_group(s.grid, xval + 4 * k, waux + 4 * k, id, scale, L + 4 * k);
    }
    float sumqx, sumq2;
    weighted_sums(xval, w, L, &sumqx, &sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return scale;
}

// A sub-block of 32 at s.x + 32 ib: error weights, their square roots (the neighbour search's
// weights), magnitudes xval and, per group of 8, the sign bits (bit i: value i < 0) and the count
// of negative values (returned in nneg).
void split_sub_block(const IqScaledBlock& s, int ib, const float* importance, float* weight, float* waux, float* xval,
                     uint8_t* signs, int* nneg) {
  const float* xb = s.x + 32 * ib;
  iq_error_weights(xb, importance ? importance + 32 * ib : nullptr, s.sigma2, 32, weight);
  for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
  for (int k = 0; k < 4; ++k) {
    signs[k] = 0;
    nneg[k] = 0;
    for (int i = 0; i < 8; ++i) {
      const float v = xb[8 * k + i];
      if (v >= 0) {
        xval[8 * k + i] = v;
      } else {
        xval[8 * k + i] = -v;
        ++nneg[k];
        signs[k] |= static_cast<uint8_t>(1 << i);
      }
    }
  }
}

int grid_index_of(const IqGridSearch& gs, const int8_t* L) {
  const int g = gs.grid_index(gs.key(L));
  OX_CHECK(g >= 0);  // the fit only returns points of the grid
  return g;
}

void quantize_block_iq3_xxs(const float* x, BlockIQ3_XXS* y, const float* importance) {
  const Iq3Search search{iq3xxs_grid_search(), 15, false};
  IqScaledBlock s;
  iq_scale_super_block(x, &s);
  std::memset(y, 0, sizeof(*y));
  float scales[8];
  float max_scale = 0.0f;
  uint32_t scales_and_signs[8] = {};
  for (int ib = 0; ib < 8; ++ib) {
    const float* xb = s.x + 32 * ib;
    float weight[32], waux[32], xval[32];
    uint8_t block_signs[4];
    int nneg[4];
    split_sub_block(s, ib, importance, weight, waux, xval, block_signs, nneg);
    for (int k = 0; k < 4; ++k) {
      // Only 7 signs are stored: the 8th makes the count of negatives even. With an odd count,
      // flip the sign of the value that costs least (weight * x^2) to get wrong.
      if (nneg[k] % 2) {
        int imin = 0;
        float min = weight[8 * k] * xb[8 * k] * xb[8 * k];
        for (int i = 1; i < 8; ++i) {
          const float ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
          if (ax < min) {
            min = ax;
            imin = i;
          }
        }
        xval[8 * k + imin] = -xval[8 * k + imin];
        block_signs[k] ^= static_cast<uint8_t>(1 << imin);
      }
      block_signs[k] &= 127;
    }
    float max = xval[0];
    for (int i = 1; i < 32; ++i) max = max > xval[i] ? max : xval[i];  // MAX(max, xval[i])
    int8_t L[32] = {};
    scales[ib] = 0.0f;
    if (std::ldexp(max, s.e) < 1e-8f) continue;  // GROUP_MAX_EPS_IQ3_XXS, on the unscaled values
    float scale = fit_sub_block(search, xval, weight, waux, max, L);
    if (scale < 0) {  // as llama.cpp: cannot happen, but the stored scale is unsigned
      scale = -scale;
      for (uint8_t& b : block_signs) b = static_cast<uint8_t>(~b & 127);
    }
    for (int k = 0; k < 8; ++k) y->qs[8 * ib + k] = static_cast<uint8_t>(grid_index_of(search.grid, L + 4 * k));
    scales_and_signs[ib] = block_signs[0] | (block_signs[1] << 7) | (block_signs[2] << 14) | (block_signs[3] << 21);
    scales[ib] = scale;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (max_scale == 0.0f) {
    std::memset(y, 0, sizeof(*y));
    return;
  }
  const float d = max_scale / 31;
  y->d = fp16_saturate(std::ldexp(d * 1.0125f, s.e));  // llama.cpp's fudge factor
  const float id = 1 / d;
  for (int ib = 0; ib < 8; ++ib) {
    const int l = round_clamp(0.5f * (id * scales[ib] - 1), 0, 15);
    store_u32(y->qs + kQK_K / 4 + 4 * ib, scales_and_signs[ib] | (static_cast<uint32_t>(l) << 28));
  }
}

void quantize_block_iq3_s(const float* x, BlockIQ3_S* y, const float* importance) {
  const Iq3Search search{iq3s_grid_search(), 9, true};
  IqScaledBlock s;
  iq_scale_super_block(x, &s);
  std::memset(y, 0, sizeof(*y));
  float scales[8];
  float max_scale = 0.0f;
  for (int ib = 0; ib < 8; ++ib) {
    float weight[32], waux[32], xval[32];
    uint8_t block_signs[4];
    int nneg[4];
    split_sub_block(s, ib, importance, weight, waux, xval, block_signs, nneg);
    float max = xval[0];
    for (int i = 1; i < 32; ++i) max = max > xval[i] ? max : xval[i];  // MAX(max, xval[i])
    scales[ib] = 0.0f;
    // An all-zero sub-block keeps zero indices and signs. (llama.cpp then also skips advancing its
    // qs / signs write position, which moves the following sub-blocks' indices into the wrong
    // place; oxidize writes every sub-block at its own offset.)
    if (max == 0.0f) continue;
    int8_t L[32] = {};
    float scale = fit_sub_block(search, xval, weight, waux, max, L);
    if (scale < 0) {
      scale = -scale;
      for (uint8_t& b : block_signs) b = static_cast<uint8_t>(~b);
    }
    for (int k = 0; k < 8; ++k) {
      const int g = grid_index_of(search.grid, L + 4 * k);
      y->qs[8 * ib + k] = static_cast<uint8_t>(g & 255);
      y->qh[ib] |= static_cast<uint8_t>((g >> 8) << k);
    }
    std::memcpy(y->signs + 4 * ib, block_signs, 4);
    scales[ib] = scale;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (max_scale == 0.0f) return;
  const float d = max_scale / 31;
  y->d = fp16_saturate(std::ldexp(d * 1.033f, s.e));  // llama.cpp's fudge factor
  const float id = 1 / d;
  for (int ib = 0; ib < 8; ib += 2) {
    const int l1 = round_clamp(0.5f * (id * scales[ib] - 1), 0, 15);
    const int l2 = round_clamp(0.5f * (id * scales[ib + 1] - 1), 0, 15);
    y->scales[ib / 2] = static_cast<uint8_t>(l1 | (l2 << 4));
  }
}

template <typename Block, void (*kQuantizeBlock)(const float*, Block*, const float*)>
void quantize_rows_with(const float* x, void* vy, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(n_per_row % kQK_K == 0);
  Block* y = static_cast<Block*>(vy);
  const int64_t nb = n_per_row / kQK_K;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      kQuantizeBlock(x + r * n_per_row + b * kQK_K, &y[r * nb + b], importance ? importance + b * kQK_K : nullptr);
    }
  }
}

// How each IQ3 block stores, per sub-block ib: the codebook entry of group g (0..7, 4 values), the
// 8 signs of group l (0..3, 8 values), and the sub-block scale.
struct Iq3XxsLayout {
  using Block = BlockIQ3_XXS;
  static constexpr float kDotFactor = 0.25f;  // dot_scale counts quarters of d
  static uint32_t aux(const Block& b, int ib) { return load_u32(b.qs + kQK_K / 4 + 4 * ib); }
  static uint32_t entry(const Block& b, int ib, int g) { return kIQ3XXSGrid[b.qs[8 * ib + g]]; }
  static uint8_t signs(const Block& b, int ib, int l) { return kIQ2Signs[(aux(b, ib) >> (7 * l)) & 127]; }
  static int32_t dot_scale(const Block& b, int ib) { return static_cast<int32_t>(2 * (aux(b, ib) >> 28) + 1); }
  static float scale(float d, const Block& b, int ib) { return d * (0.5f + static_cast<float>(aux(b, ib) >> 28)) * 0.5f; }
};

struct Iq3SLayout {
  using Block = BlockIQ3_S;
  static constexpr float kDotFactor = 1.0f;
  static int nibble(const Block& b, int ib) { return (b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF; }
  static uint32_t entry(const Block& b, int ib, int g) { return kIQ3SGrid[iq3s_index(b.qs + 8 * ib, b.qh[ib], g)]; }
  static uint8_t signs(const Block& b, int ib, int l) { return b.signs[4 * ib + l]; }
  static int32_t dot_scale(const Block& b, int ib) { return 1 + 2 * nibble(b, ib); }
  static float scale(float d, const Block& b, int ib) { return d * static_cast<float>(1 + 2 * nibble(b, ib)); }
};

// x = scale * grid * sign, value j of group l of sub-block ib at 32 ib + 8 l + j.
template <typename Layout>
void dequantize_iq3(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const auto* x = static_cast<const typename Layout::Block*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    const float d = fp16_to_f32(x[b].d);
    for (int ib = 0; ib < 8; ++ib) {
      const float db = Layout::scale(d, x[b], ib);
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = Layout::signs(x[b], ib, l);
        for (int j = 0; j < 8; ++j) {
          const uint32_t entry = Layout::entry(x[b], ib, 2 * l + j / 4);
          y[32 * ib + 8 * l + j] = db * static_cast<float>(iq3_grid_byte(entry, j % 4)) * grid_sign(signs, j);
        }
      }
    }
  }
}

// Per block: isum = sum_ib dot_scale_ib * sum_j grid_j * sign_j * q8_j, then (d_w * d_a) * isum;
// the sum times kDotFactor (exact, a power of two) at the end, as llama.cpp applies IQ3_XXS's 1/4.
template <typename Layout>
void vec_dot_iq3(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const auto* x = static_cast<const typename Layout::Block*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0;
    for (int ib = 0; ib < 8; ++ib) {
      int32_t sub = 0;
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = Layout::signs(x[b], ib, l);
        for (int j = 0; j < 8; ++j) {
          const uint32_t entry = Layout::entry(x[b], ib, 2 * l + j / 4);
          sub += iq3_grid_byte(entry, j % 4) * y[b].qs[32 * ib + 8 * l + j] * grid_sign_int(signs, j);
        }
      }
      isum += sub * Layout::dot_scale(x[b], ib);
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = Layout::kDotFactor * sum;
}

}  // namespace

void dequantize_iq3_xxs(const void* x, float* y, int64_t n) { dequantize_iq3<Iq3XxsLayout>(x, y, n); }

void quantize_iq3_xxs(const float* x, void* y, int64_t n) { quantize_rows_iq3_xxs(x, y, 1, n, nullptr); }

void quantize_rows_iq3_xxs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_with<BlockIQ3_XXS, quantize_block_iq3_xxs>(x, y, n_rows, n_per_row, importance);
}

void vec_dot_iq3_xxs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq3<Iq3XxsLayout>(n, s, x, y); }

void dequantize_iq3_s(const void* x, float* y, int64_t n) { dequantize_iq3<Iq3SLayout>(x, y, n); }

void quantize_iq3_s(const float* x, void* y, int64_t n) { quantize_rows_iq3_s(x, y, 1, n, nullptr); }

void quantize_rows_iq3_s(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  quantize_rows_with<BlockIQ3_S, quantize_block_iq3_s>(x, y, n_rows, n_per_row, importance);
}

void vec_dot_iq3_s_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot_iq3<Iq3SLayout>(n, s, x, y); }

}  // namespace ox::quant
