// Weighted least-squares scale searches for the weight quantizers (see scale_search.h), ported from
// llama.cpp's ggml-quants.c keeping its float operation order (the build has -ffp-contract=off, as
// ggml-base's x86-64 build contracts nothing).
// For fixed integer levels l the best scale is s = sum(w x l) / sum(w l^2) and the weighted error
// is sum(w x^2) - sum(w x l)^2 / sum(w l^2); so "maximise sumlx^2 / suml2" picks the candidate.
#include "core/quant/scale_search.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/quant/reference.h"

namespace ox::quant {
namespace {

// Signed value of largest magnitude and that magnitude.
void signed_max(int n, const float* x, float* vmax, float* amax) {
  *vmax = 0.0f;
  *amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > *amax) {
      *amax = ax;
      *vmax = x[i];
    }
  }
}

}  // namespace

int group_exponent(const float* x, int n) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  int e = 0;
  std::frexp(amax, &e);
  return e;
}

void scale_pow2(const float* x, float* out, int n, int e) {
  for (int i = 0; i < n; ++i) out[i] = std::ldexp(x[i], -e);
}

float fit_symmetric(int n, int nmax, const float* x, const float* w, uint8_t* L) {
  float vmax, amax;
  signed_max(n, x, &vmax, &amax);
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float fnmax = static_cast<float>(nmax);
  // Candidate is maps the extreme element to level -(nmax + 0.1 is): is = 0 (the plain rounding)
  // first and always taken, then -9..9, each kept only if strictly better.
  uint8_t trial[256];
  float best = 0.0f, scale = 0.0f;
  for (int k = 0; k <= 18; ++k) {
    const int is = k == 0 ? 0 : (k <= 9 ? k - 10 : k - 9);
    const float iscale = -(fnmax + 0.1f * static_cast<float>(is)) / vmax;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = round_clamp(iscale * x[i], -nmax, nmax - 1);
      trial[i] = static_cast<uint8_t>(l + nmax);
      const float wi = w ? w[i] : x[i] * x[i];
      const float fl = static_cast<float>(l);
      sumlx += wi * x[i] * fl;
      suml2 += wi * fl * fl;
    }
    if (k == 0) {
      scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
      best = scale * sumlx;
    } else if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      scale = sumlx / suml2;
      best = scale * sumlx;
    } else {
      continue;
    }
    std::memcpy(L, trial, static_cast<size_t>(n));
  }
  return scale;
}

float fit_symmetric_refined(int n, int nmax, const float* x, uint8_t* L) {
  float vmax, amax;
  signed_max(n, x, &vmax, &amax);
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float iscale = -static_cast<float>(nmax) / vmax;
  int l[256];
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    l[i] = round_clamp(iscale * x[i], -nmax, nmax - 1);
    const float wi = x[i] * x[i];
    sumlx += wi * x[i] * static_cast<float>(l[i]);
    suml2 += wi * static_cast<float>(l[i]) * static_cast<float>(l[i]);
  }
  // Coordinate descent: move one level to its best value given the scale the others imply (only
  // while that scale is positive), keep the move if the weighted error (-sumlx^2/suml2) drops.
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float wi = x[i] * x[i];
      const float li = static_cast<float>(l[i]);
      float slx = sumlx - wi * x[i] * li;
      if (!(slx > 0.0f)) continue;
      float sl2 = suml2 - wi * li * li;
      const int nl = round_clamp(x[i] * sl2 / slx, -nmax, nmax - 1);
      if (nl == l[i]) continue;
      slx += wi * x[i] * static_cast<float>(nl);
      sl2 += wi * static_cast<float>(nl) * static_cast<float>(nl);
      if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
        l[i] = nl;
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(l[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
                    float rmin, float rdelta, int nstep, bool use_mad) {
  auto weight = [&](int i) { return w ? w[i] : x[i] * x[i]; };
  float vmin = x[0], vmax = x[0], sum_w = weight(0);
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < vmin) vmin = x[i];
    if (x[i] > vmax) vmax = x[i];
    sum_w += weight(i);
    sum_x += weight(i) * x[i];
  }
  if (vmin > 0.0f) vmin = 0.0f;  // the stored min is subtracted and kept >= 0
  if (!(vmax > vmin)) {
    std::memset(L, 0, static_cast<size_t>(n));
    *min_out = -vmin;
    return 0.0f;
  }
  auto error_of = [&](float scale, float mn, const uint8_t* lv) {
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * static_cast<float>(lv[i]) + mn - x[i];
      err += weight(i) * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return err;
  };
  const float fnmax = static_cast<float>(nmax);
  float iscale = fnmax / (vmax - vmin);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(round_clamp(iscale * (x[i] - vmin), 0, nmax));
  float best_err = error_of(scale, vmin, L);
  if (nstep < 1) {
    *min_out = -vmin;
    return scale;
  }
  uint8_t trial[256];
  for (int k = 0; k <= nstep; ++k) {
    // vmin is the best candidate's min so far: llama.cpp's searches move it as they go.
    iscale = (rmin + rdelta * static_cast<float>(k) + fnmax) / (vmax - vmin);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = round_clamp(iscale * (x[i] - vmin), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l), wi = weight(i);
      sum_l += wi * fl;
      sum_l2 += wi * fl * fl;
      sum_xl += wi * fl * x[i];
    }
    // Weighted linear regression x ~= scale * l + mn over the chosen levels.
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0.0f)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float mn = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (mn > 0.0f) {  // a positive offset cannot be stored: refit the scale alone
      mn = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    const float err = error_of(this_scale, mn, trial);
    if (err < best_err) {
      best_err = err;
      scale = this_scale;
      vmin = mn;
      std::memcpy(L, trial, static_cast<size_t>(n));
    }
  }
  *min_out = -vmin;
  return scale;
}

namespace {

// nearbyint of v as an int, without a level clamp (fit_unsigned clamps above only, as llama.cpp).
int nearest(float v) { return round_clamp(v, -(1 << 22), 1 << 22); }

}  // namespace

float fit_unsigned(int n, int nmax, const float* x, const float* w, uint8_t* L) {
  float vmax = 0.0f;
  for (int i = 0; i < n; ++i) vmax = vmax > x[i] ? vmax : x[i];
  if (vmax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float fnmax = static_cast<float>(nmax);
  // The inverse scale among nmax / max and 8 neighbours with the smallest weighted error.
  float iscale = fnmax / vmax;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(nearest(iscale * x[i]));
  float best_mse = 0.0f;
  {
    const float scale = 1.0f / iscale;
    for (int i = 0; i < n; ++i) {
      const float diff = x[i] - scale * static_cast<float>(L[i]);
      best_mse += w[i] * diff * diff;
    }
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    const float iscale_is = (0.1f * static_cast<float>(is) + fnmax) / vmax;
    const float scale_is = 1.0f / iscale_is;
    float mse = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::min(nmax, nearest(iscale_is * x[i]));
      const float diff = x[i] - scale_is * static_cast<float>(l);
      mse += w[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest(iscale * x[i]));
    L[i] = static_cast<uint8_t>(l);
    sumlx += w[i] * x[i] * static_cast<float>(l);
    suml2 += w[i] * static_cast<float>(l) * static_cast<float>(l);
  }
  // Coordinate descent on the levels, as fit_symmetric_refined.
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w[i] * x[i] * li;
      float sl2 = suml2 - w[i] * li * li;
      if (!(slx > 0.0f && sl2 > 0.0f)) continue;
      const int nl = std::min(nmax, nearest(x[i] * sl2 / slx));
      if (nl == L[i]) continue;
      slx += w[i] * x[i] * static_cast<float>(nl);
      sl2 += w[i] * static_cast<float>(nl) * static_cast<float>(nl);
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<uint8_t>(nl);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

int nearest_level(const int8_t* table, float v) {
  // Count the midpoints between neighbouring levels that v reaches (a tie goes up, as llama.cpp's
  // best_index_int8): branch-free, which matters since the IQ4 searches call this ~30 times per weight.
  int idx = 0;
  for (int k = 0; k < 15; ++k) idx += v >= 0.5f * static_cast<float>(table[k] + table[k + 1]) ? 1 : 0;
  return idx;
}

float fit_nonlinear(int n, const int8_t* table, const float* x, const float* w, int ntry) {
  float vmax, amax;
  signed_max(n, x, &vmax, &amax);
  if (amax < kGroupMaxEps) return 0.0f;
  // Least-squares scale for the indices nearest to x * id.
  auto solve = [&](float id, float* sumqx, float* sumq2) {
    *sumqx = 0.0f;
    *sumq2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float q = static_cast<float>(table[nearest_level(table, id * x[i])]);
      *sumqx += w[i] * q * x[i];
      *sumq2 += w[i] * q * q;
    }
  };
  const float t0 = static_cast<float>(table[0]);
  // First the extreme element mapped to +127 (clipped to the table's top, 113), then 2*ntry+1
  // inverse scales putting it around the wide end (-127); strictly better ones replace it.
  const float d0 = ntry > 0 ? -vmax / t0 : vmax / t0;
  float sumqx, sumq2;
  solve(1.0f / d0, &sumqx, &sumq2);
  float d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int k = -ntry; k <= ntry; ++k) {
    solve(static_cast<float>(k + table[0]) / vmax, &sumqx, &sumq2);
    if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

WeightedRow::WeightedRow(const float* x, int64_t n) {
  float amax = 0.0f;
  for (int64_t j = 0; j < n; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  if (amax > 0.0f && std::isfinite(amax)) std::frexp(amax, &e);
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    const float v = std::ldexp(x[j], -e);
    s += v * v;
  }
  sigma2 = s / static_cast<float>(n);
}

int WeightedRow::block(const float* x, const float* importance, int n, float* xn, float* w) const {
  for (int j = 0; j < n; ++j) {
    const float v = std::ldexp(x[j], -e);
    w[j] = importance[j] * std::sqrt(sigma2 + v * v);
  }
  const int eb = group_exponent(x, n);
  scale_pow2(x, xn, n, eb);
  return eb;
}

void importance_weights(const float* x, const float* importance, float sigma2, int n, float* w) {
  for (int j = 0; j < n; ++j) w[j] = importance[j] * std::sqrt(sigma2 + x[j] * x[j]);
}

float sum_squares(const float* x, int64_t n) {
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) s += x[j] * x[j];
  return s;
}

void quantize_rows_split(DType type, FromFloatFn plain, WeightedRowFn weighted, const float* x, void* y,
                         int64_t n_rows, int64_t n_per_row, const float* importance) {
  const uint64_t row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(n_per_row));
  for (int64_t r = 0; r < n_rows; ++r) {
    uint8_t* out = static_cast<uint8_t*>(y) + static_cast<uint64_t>(r) * row_bytes;
    if (importance == nullptr) {
      plain(x + r * n_per_row, out, n_per_row);
    } else {
      weighted(x + r * n_per_row, out, n_per_row, importance);
    }
  }
}

}  // namespace ox::quant
