// Shared part of the Q4_K / Q5_K quantizers: fit each sub-block of 32 with an error-weighted
// scale/min search, then quantize the 8 scales and 8 mins to 6 bits against d and dmin (the plain
// way: the largest maps to 63; under importance: a weighted fit of their own).
#include "core/quant/k_pack.h"

#include <cmath>

#include "core/quant/reference.h"
#include "core/quant/scale_search.h"

namespace ox::quant {

void pack_scale_min_k4(const uint8_t* sc, const uint8_t* m, uint8_t* q) {
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    q[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    q[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

void fit_k_scales_mins(const float* x, int nmax, float rmin, float rdelta, int nstep, uint8_t* L,
                       uint8_t* packed_scales, float* d, float* dmin) {
  float scales[8], mins[8], w[32];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    // Weight |x| plus the sub-block's RMS: large elements count more, small ones still count.
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_scale_min(32, nmax, xs, w, L + 32 * j, &mins[j], rmin, rdelta, nstep, false);
    max_scale = std::fmax(max_scale, scales[j]);
    max_min = std::fmax(max_min, mins[j]);
  }
  const float iscale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float imin = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(round_clamp(iscale * scales[j], 0, 63));
    lm[j] = static_cast<uint8_t>(round_clamp(imin * mins[j], 0, 63));
  }
  pack_scale_min_k4(ls, lm, packed_scales);
  *d = max_scale / 63.0f;
  *dmin = max_min / 63.0f;
}

void fit_k_scales_mins_weighted(const float* x, const float* importance, int nmax, uint8_t* L,
                                uint8_t* packed_scales, float* d, float* dmin) {
  const float sigma2 = 2.0f * sum_squares(x, 256) / 256.0f;
  float scales[8], mins[8], sw[8], w[32];
  for (int j = 0; j < 8; ++j) {
    importance_weights(x + 32 * j, importance + 32 * j, sigma2, 32, w);
    sw[j] = 0.0f;
    for (int l = 0; l < 32; ++l) sw[j] += w[l];
    scales[j] = fit_scale_min(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], -0.9f, 0.05f, 36, false);
  }
  uint8_t ls[8], lm[8];
  *d = fit_unsigned(8, 63, scales, sw, ls);
  *dmin = fit_unsigned(8, 63, mins, sw, lm);
  pack_scale_min_k4(ls, lm, packed_scales);
}

void requantize_k_levels(const float* x, int nmax, float d, float dmin, const uint8_t* packed_scales,
                         uint8_t* L) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, packed_scales, &sc, &m);
    const float dl = d * static_cast<float>(sc);
    if (dl == 0.0f) continue;  // levels multiply a zero scale: keep the search's
    const float ml = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) L[32 * j + l] = static_cast<uint8_t>(round_clamp((x[32 * j + l] + ml) / dl, 0, nmax));
  }
}

}  // namespace ox::quant
