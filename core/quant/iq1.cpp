// Scalar references of IQ1_S (sub-blocks of 32, one scale and delta sign each) and IQ1_M (scales
// per 16, delta sign per group of 8, the fp16 d spread over the scale bytes); groups of 8 values
// in {-1, 0, 1} are kIQ1SGrid entries, shifted by +-delta (layouts in blocks.h). The quantizers
// follow llama.cpp's quantize_row_iq1_s_impl / quantize_row_iq1_m_impl step for step, on each
// super-block scaled by a power of two (exact) so that extreme inputs stay finite.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/iq_grid_search.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

// The three values of a group with a positive (kPlus) or negative (kMinus) delta, by level.
constexpr float kPlus[3] = {-1 + kIQ1SDelta, kIQ1SDelta, 1 + kIQ1SDelta};
constexpr float kMinus[3] = {-1 - kIQ1SDelta, -kIQ1SDelta, 1 - kIQ1SDelta};
static_assert(kIQ1SDelta == kIQ1MDelta, "IQ1_S and IQ1_M share the level tables");

// 11-bit grid index of group g (0..31) of an IQ1_S block: qh[g / 4] bits 3 (g % 4) .. + 2.
int iq1s_index(const BlockIQ1_S& b, int g) { return b.qs[g] | (((b.qh[g / 4] >> (3 * (g % 4))) & 7) << 8); }
// IQ1_M group g: its nibble of qh[g / 2] holds 3 index bits and the delta sign (bit 3).
int iq1m_nibble(const BlockIQ1_M& b, int g) { return (b.qh[g / 2] >> (4 * (g % 2))) & 0xF; }
int iq1m_index(const BlockIQ1_M& b, int g) { return b.qs[g] | ((iq1m_nibble(b, g) & 7) << 8); }
uint16_t iq1m_u16(const BlockIQ1_M& b, int i) { return static_cast<uint16_t>(b.scales[2 * i] | (b.scales[2 * i + 1] << 8)); }
// 3-bit scale of the 16 values h (0..15): bits 3 (h % 4) of u16 h / 4.
int iq1m_scale(const BlockIQ1_M& b, int h) { return (iq1m_u16(b, h / 4) >> (3 * (h % 4))) & 7; }
// The fp16 super-block scale: the top nibbles of the four u16 (iq1m_scale_t in llama.cpp).
float iq1m_d(const BlockIQ1_M& b) {
  uint16_t h = 0;
  for (int i = 0; i < 4; ++i) h |= static_cast<uint16_t>((iq1m_u16(b, i) >> 12) << (4 * i));
  return fp16_to_f32(h);
}

// Indices of n values in ascending order of x, equal values in index order (insertion sort:
// stable, and no undefined behaviour on NaN).
void sort_indices(const float* x, int n, int* idx) {
  for (int i = 0; i < n; ++i) {
    idx[i] = i;
    for (int j = i; j > 0 && x[idx[j - 1]] > x[idx[j]]; --j) std::swap(idx[j - 1], idx[j]);
  }
}

// Grid points for the groups of 8 of levels L (one value table per group); groups off the grid
// take their best neighbour. Returns whether all were on the grid.
bool to_grid(const IqGridSearch& gs, const float* x, const float* w, float scale, const float* const* xx, int n_groups,
             int8_t* L, int* index) {
  bool all_on_grid = true;
  for (int k = 0; k < n_groups; ++k) {
    const uint32_t key = gs.key(L + 8 * k);
    index[k] = gs.grid_index(key);
    if (index[k] < 0) {
      all_on_grid = false;
      index[k] = gs.best_neighbour(key, x + 8 * k, w + 8 * k, scale, xx[k], L + 8 * k);  // iq1_find_best_neighbour2
    }
  }
  return all_on_grid;
}

// Least-squares scale of x against the grid points' values; `scale` unchanged unless both sums > 0.
float refit_scale(const IqGridSearch& gs, const float* x, const float* w, const float* const* xx, int n_groups,
                  const int* index, float scale) {
  float sumqx = 0.0f, sumq2 = 0.0f;
  for (int k = 0; k < n_groups; ++k) {
    for (int j = 0; j < 8; ++j) {
      const float q = xx[k][gs.level(index[k], j)];
      sumqx += w[8 * k + j] * q * x[8 * k + j];
      sumq2 += w[8 * k + j] * q * q;
    }
  }
  return sumqx > 0 && sumq2 > 0 ? sumqx / sumq2 : scale;
}

// Error weights of the n values at s.x + offset; false if their largest magnitude, unscaled, is
// below eps (llama.cpp's GROUP_MAX_EPS_IQ1_*: the group is left at zero). *max: the scaled one.
bool sub_block_weights(const IqScaledBlock& s, int offset, int n, const float* importance, float eps, float* weight,
                       float* max) {
  const float* xb = s.x + offset;
  iq_error_weights(xb, importance ? importance + offset : nullptr, s.sigma2, n, weight);
  *max = std::fabs(xb[0]);
  for (int i = 1; i < n; ++i) *max = *max > std::fabs(xb[i]) ? *max : std::fabs(xb[i]);
  return !(std::ldexp(*max, s.e) < eps);
}

// The exhaustive split search of IQ1_S: values sorted ascending get levels 0 / 1 / 2 split at
// (i1, i2); both delta signs tried. Returns false if no split has a positive weighted norm.
bool search_iq1_s(const float* xb, const float* weight, const int* idx, float max, float* scale, int* shift, int8_t* L) {
  float sumx[33], sumw[33];
  sumx[0] = sumw[0] = 0.0f;
  for (int j = 0; j < 32; ++j) {
    sumx[j + 1] = sumx[j] + weight[idx[j]] * xb[idx[j]];
    sumw[j + 1] = sumw[j] + weight[idx[j]];
  }
  float best_score = -FLT_MAX;
  *scale = max;
  int besti1 = -1, besti2 = -1, best_shift = 0;
  for (int i1 = 0; i1 <= 32; ++i1) {
    for (int i2 = i1; i2 <= 32; ++i2) {
      for (int sign = 1; sign >= -1; sign -= 2) {
        const float* v = sign == 1 ? kPlus : kMinus;
        const float sumqx = (sumx[i1] - sumx[0]) * v[0] + (sumx[i2] - sumx[i1]) * v[1] + (sumx[32] - sumx[i2]) * v[2];
        const float sumq2 = (sumw[i1] - sumw[0]) * v[0] * v[0] + (sumw[i2] - sumw[i1]) * v[1] * v[1] +
                            (sumw[32] - sumw[i2]) * v[2] * v[2];
        if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
          *scale = sumqx / sumq2;
          best_score = *scale * sumqx;
          besti1 = i1;
          besti2 = i2;
          best_shift = sign;
        }
      }
    }
  }
  if (besti1 < 0 || besti2 < 0 || best_shift == 0) return false;
  for (int j = 0; j < 32; ++j) L[idx[j]] = static_cast<int8_t>(j < besti1 ? 0 : j < besti2 ? 1 : 2);
  *shift = best_shift;
  return true;
}

void quantize_block_iq1_s(const float* x, BlockIQ1_S* y, const float* importance) {
  const IqGridSearch& gs = iq1s_grid_search();
  IqScaledBlock s;
  iq_scale_super_block(x, &s);
  std::memset(y, 0, sizeof(*y));
  float scales[8];
  int shifts[8];
  float max_scale = 0.0f;
  for (int ib = 0; ib < 8; ++ib) {
    const float* xb = s.x + 32 * ib;
    float weight[32], max;
    scales[ib] = 0.0f;
    shifts[ib] = 1;
    if (!sub_block_weights(s, 32 * ib, 32, importance, 1e-12f, weight, &max)) continue;
    int idx[32], shift = 0;
    int8_t L[32];
    float scale;
    sort_indices(xb, 32, idx);
    if (!search_iq1_s(xb, weight, idx, max, &scale, &shift, L)) continue;
    if (scale < 0) {
      for (int8_t& l : L) l = static_cast<int8_t>(2 - l);
      scale = -scale;
      shift = -shift;
    }
    const float* xx = shift == 1 ? kPlus : kMinus;
    const float* const tables[4] = {xx, xx, xx, xx};
    int index[4];
    if (!to_grid(gs, xb, weight, scale, tables, 4, L, index)) scale = refit_scale(gs, xb, weight, tables, 4, index, scale);
    uint16_t h = 0;
    for (int k = 0; k < 4; ++k) {
      y->qs[4 * ib + k] = static_cast<uint8_t>(index[k] & 255);
      h |= static_cast<uint16_t>((index[k] >> 8) << (3 * k));
    }
    y->qh[ib] = h;
    scales[ib] = scale;
    shifts[ib] = shift;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (max_scale == 0.0f) return;
  const float d = max_scale / 15;
  y->d = fp16_saturate(std::ldexp(d * 1.125f, s.e));  // llama.cpp's fudge factor
  const float id = 1 / d;
  for (int ib = 0; ib < 8; ++ib) {
    int l = round_clamp(0.5f * (id * scales[ib] - 1), 0, 7);
    if (shifts[ib] == -1) l |= 8;
    y->qh[ib] |= static_cast<uint16_t>(l << 12);
  }
}

// IQ1_M's split search over 16 values: each half (8 values) may take either delta sign, so the
// prefix sums are kept per half; k = 0 (+,+), 1 (+,-), 2 (-,+), 3 (-,-).
bool search_iq1_m(const float* xb, const float* weight, const int* idx, float max, float* scale, int* best_k, int8_t* L) {
  float px[2][17], pw[2][17];
  px[0][0] = px[1][0] = pw[0][0] = pw[1][0] = 0.0f;
  for (int j = 0; j < 16; ++j) {
    const int i = idx[j];
    const int h = i < 8 ? 0 : 1;
    px[h][j + 1] = px[h][j] + weight[i] * xb[i];
    px[1 - h][j + 1] = px[1 - h][j];
    pw[h][j + 1] = pw[h][j] + weight[i];
    pw[1 - h][j + 1] = pw[1 - h][j];
  }
  // The levels' values step by 1, so a split's sum is T * v[2] - S(i1) - S(i2).
  const float txs[2] = {px[0][16], px[1][16]}, tws[2] = {pw[0][16], pw[1][16]};
  const float p2 = kPlus[2], m2 = kMinus[2];
  const float cp1 = kPlus[0] * kPlus[0] - kPlus[1] * kPlus[1], cp2 = kPlus[1] * kPlus[1] - kPlus[2] * kPlus[2];
  const float cm1 = kMinus[0] * kMinus[0] - kMinus[1] * kMinus[1], cm2 = kMinus[1] * kMinus[1] - kMinus[2] * kMinus[2];
  float best_score = -FLT_MAX;
  *scale = max;
  int besti1 = -1, besti2 = -1;
  *best_k = -1;
  for (int i1 = 0; i1 <= 16; ++i1) {
    for (int i2 = i1; i2 <= 16; ++i2) {
      float qx_p[2], qx_m[2], q2_p[2], q2_m[2];
      for (int h = 0; h < 2; ++h) {
        const float sx = px[h][i1] + px[h][i2];
        qx_p[h] = txs[h] * p2 - sx;
        qx_m[h] = txs[h] * m2 - sx;
        q2_p[h] = tws[h] * p2 * p2 + pw[h][i1] * cp1 + pw[h][i2] * cp2;
        q2_m[h] = tws[h] * m2 * m2 + pw[h][i1] * cm1 + pw[h][i2] * cm2;
      }
      const float sumqx[4] = {qx_p[0] + qx_p[1], qx_p[0] + qx_m[1], qx_m[0] + qx_p[1], qx_m[0] + qx_m[1]};
      const float sumq2[4] = {q2_p[0] + q2_p[1], q2_p[0] + q2_m[1], q2_m[0] + q2_p[1], q2_m[0] + q2_m[1]};
      for (int k = 0; k < 4; ++k) {
        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
          *scale = sumqx[k] / sumq2[k];
          best_score = *scale * sumqx[k];
          besti1 = i1;
          besti2 = i2;
          *best_k = k;
        }
      }
    }
  }
  if (besti1 < 0 || besti2 < 0 || *best_k < 0) return false;
  for (int j = 0; j < 16; ++j) L[idx[j]] = static_cast<int8_t>(j < besti1 ? 0 : j < besti2 ? 1 : 2);
  return true;
}

// Value tables of IQ1_M's two groups of 8 for a sign choice k of search_iq1_m.
void iq1m_tables(int k, const float* tables[2]) {
  tables[0] = k < 2 ? kPlus : kMinus;
  tables[1] = k % 2 == 0 ? kPlus : kMinus;
}

void quantize_block_iq1_m(const float* x, BlockIQ1_M* y, const float* importance) {
  const IqGridSearch& gs = iq1s_grid_search();
  constexpr uint8_t kMasks[4] = {0x00, 0x80, 0x08, 0x88};  // delta sign bits of (+,+) .. (-,-)
  IqScaledBlock s;
  iq_scale_super_block(x, &s);
  std::memset(y, 0, sizeof(*y));
  float scales[16];
  int shifts[16];
  float max_scale = 0.0f;
  for (int ib = 0; ib < 16; ++ib) {
    const float* xb = s.x + 16 * ib;
    float weight[16], max;
    scales[ib] = 0.0f;
    shifts[ib] = 0;
    if (!sub_block_weights(s, 16 * ib, 16, importance, 1e-7f, weight, &max)) continue;
    int idx[16], k = -1;
    int8_t L[16];
    float scale;
    sort_indices(xb, 16, idx);
    if (!search_iq1_m(xb, weight, idx, max, &scale, &k, L)) continue;
    if (scale < 0) {
      for (int8_t& l : L) l = static_cast<int8_t>(2 - l);
      scale = -scale;
      k = 3 - k;  // both signs flip: (+,+) <-> (-,-), (+,-) <-> (-,+)
    }
    const float* tables[2];
    iq1m_tables(k, tables);
    int index[2];
    if (!to_grid(gs, xb, weight, scale, tables, 2, L, index)) scale = refit_scale(gs, xb, weight, tables, 2, index, scale);
    y->qs[2 * ib] = static_cast<uint8_t>(index[0] & 255);
    y->qs[2 * ib + 1] = static_cast<uint8_t>(index[1] & 255);
    y->qh[ib] = static_cast<uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
    scales[ib] = scale;
    shifts[ib] = k;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (max_scale == 0.0f) return;
  // 3-bit scales against d = max / 15, then d refitted to the values as stored.
  uint16_t sc[4] = {};
  float d = max_scale / 15;
  const float id = 1 / d;
  float sumqx = 0.0f, sumq2 = 0.0f;
  for (int ib = 0; ib < 16; ++ib) {
    const int l = round_clamp(0.5f * (id * scales[ib] - 1), 0, 7);
    sc[ib / 4] |= static_cast<uint16_t>(l << (3 * (ib % 4)));
    y->qh[ib] |= kMasks[shifts[ib]];
    const float* xb = s.x + 16 * ib;
    float weight[16];
    iq_error_weights(xb, importance ? importance + 16 * ib : nullptr, s.sigma2, 16, weight);
    const float* tables[2];
    iq1m_tables(shifts[ib], tables);
    for (int k = 0; k < 2; ++k) {
      const int g = y->qs[2 * ib + k] | (((y->qh[ib] >> (4 * k)) & 7) << 8);
      for (int j = 0; j < 8; ++j) {
        const float q = tables[k][gs.level(g, j)] * static_cast<float>(2 * l + 1);
        sumqx += weight[8 * k + j] * q * xb[8 * k + j];
        sumq2 += weight[8 * k + j] * q * q;
      }
    }
  }
  if (sumq2 > 0) d = sumqx / sumq2;
  const uint16_t dh = fp16_saturate(std::ldexp(d * 1.1125f, s.e));  // llama.cpp's fudge factor
  for (int i = 0; i < 4; ++i) {
    sc[i] |= static_cast<uint16_t>(((dh >> (4 * i)) & 0xF) << 12);
    y->scales[2 * i] = static_cast<uint8_t>(sc[i]);
    y->scales[2 * i + 1] = static_cast<uint8_t>(sc[i] >> 8);
  }
}

}  // namespace

void dequantize_iq1_s(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ1_S* x = static_cast<const BlockIQ1_S*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    const float d = fp16_to_f32(x[b].d);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(2 * ((x[b].qh[ib] >> 12) & 7) + 1);
      const float delta = (x[b].qh[ib] & 0x8000) ? -kIQ1SDelta : kIQ1SDelta;
      for (int l = 0; l < 4; ++l) {
        const uint64_t entry = kIQ1SGrid[iq1s_index(x[b], 4 * ib + l)];
        for (int j = 0; j < 8; ++j) y[32 * ib + 8 * l + j] = dl * (static_cast<float>(iq1_grid_value(entry, j)) + delta);
      }
    }
  }
}

void quantize_rows_iq1_s(const float* x, void* vy, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(n_per_row % kQK_K == 0 && importance != nullptr);  // needs_importance
  BlockIQ1_S* y = static_cast<BlockIQ1_S*>(vy);
  const int64_t nb = n_per_row / kQK_K;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) quantize_block_iq1_s(x + r * n_per_row + b * kQK_K, &y[r * nb + b], importance + b * kQK_K);
  }
}

void vec_dot_iq1_s_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ1_S* x = static_cast<const BlockIQ1_S*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    // 8 x = d (2s + 1) (8 grid +- 1): the delta's 1/8 comes out as one exact factor at the end.
    int32_t isum = 0;
    for (int ib = 0; ib < 8; ++ib) {
      int32_t grid_dot = 0;
      for (int l = 0; l < 4; ++l) {
        const uint64_t entry = kIQ1SGrid[iq1s_index(x[b], 4 * ib + l)];
        for (int j = 0; j < 8; ++j) grid_dot += iq1_grid_value(entry, j) * y[b].qs[32 * ib + 8 * l + j];
      }
      const int32_t q8_sum = y[b].bsums[2 * ib] + y[b].bsums[2 * ib + 1];
      const int32_t delta = (x[b].qh[ib] & 0x8000) ? -1 : 1;
      isum += (2 * ((x[b].qh[ib] >> 12) & 7) + 1) * (8 * grid_dot + delta * q8_sum);
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = 0.125f * sum;
}

void dequantize_iq1_m(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ1_M* x = static_cast<const BlockIQ1_M*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    const float d = iq1m_d(x[b]);
    for (int g = 0; g < 32; ++g) {
      const float dl = d * static_cast<float>(2 * iq1m_scale(x[b], g / 2) + 1);
      const float delta = (iq1m_nibble(x[b], g) & 8) ? -kIQ1MDelta : kIQ1MDelta;
      const uint64_t entry = kIQ1SGrid[iq1m_index(x[b], g)];
      for (int j = 0; j < 8; ++j) y[8 * g + j] = dl * (static_cast<float>(iq1_grid_value(entry, j)) + delta);
    }
  }
}

void quantize_rows_iq1_m(const float* x, void* vy, int64_t n_rows, int64_t n_per_row, const float* importance) {
  OX_CHECK(n_per_row % kQK_K == 0);
  BlockIQ1_M* y = static_cast<BlockIQ1_M*>(vy);
  const int64_t nb = n_per_row / kQK_K;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      quantize_block_iq1_m(x + r * n_per_row + b * kQK_K, &y[r * nb + b], importance ? importance + b * kQK_K : nullptr);
    }
  }
}

void vec_dot_iq1_m_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const BlockIQ1_M* x = static_cast<const BlockIQ1_M*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0;  // sum over groups of 8: (2s + 1) (8 grid . q8 +- sum q8); the 1/8 comes last
    for (int g = 0; g < 32; ++g) {
      const uint64_t entry = kIQ1SGrid[iq1m_index(x[b], g)];
      int32_t grid_dot = 0, q8_sum = 0;
      for (int j = 0; j < 8; ++j) {
        grid_dot += iq1_grid_value(entry, j) * y[b].qs[8 * g + j];
        q8_sum += y[b].qs[8 * g + j];
      }
      const int32_t delta = (iq1m_nibble(x[b], g) & 8) ? -1 : 1;
      isum += (2 * iq1m_scale(x[b], g / 2) + 1) * (8 * grid_dot + delta * q8_sum);
    }
    sum += (iq1m_d(x[b]) * y[b].d) * static_cast<float>(isum);
  }
  *s = 0.125f * sum;
}

}  // namespace ox::quant
