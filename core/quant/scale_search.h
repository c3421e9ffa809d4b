// Error-minimising scale searches shared by the K-quant, legacy and IQ4 weight quantizers: for a
// group of values, try a few candidate scales, pick levels for each, then solve the weighted
// least-squares scale (and min) for those levels; keep the candidate with the smallest weighted
// error. Each one is llama.cpp's search of the same purpose (named below), step for step and in the
// same float operation order, so that our files carry llama-quantize's bytes.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox::quant {

// Power-of-two normalisation: the searches square and cube values, which overflows float for
// |x| beyond ~1e12 and underflows for tiny ones. Quantizers fit x * 2^-e (exact) with e from
// group_exponent, then multiply the scales by 2^e: every float operation of the searches is then
// exactly 2^-e (or 2^-2e ...) times llama.cpp's, so the bytes are unchanged for ordinary data.
int group_exponent(const float* x, int n);              // max|x| * 2^-e in [0.5, 1); 0 if all zero
void scale_pow2(const float* x, float* out, int n, int e);  // out[i] = x[i] * 2^-e

// Below this magnitude a group is treated as all zeros (its scale would be meaningless).
inline constexpr float kGroupMaxEps = 1e-15f;

// Symmetric fit x ~= scale * l, l in [-nmax, nmax-1], weighted by w (w = null: weights x^2):
// llama.cpp's make_qx_quants with rmse_type 1. Writes L[i] = l + nmax (all 0 for an all-zero group)
// and returns scale (may be negative).
float fit_symmetric(int n, int nmax, const float* x, const float* w, uint8_t* L);

// Like fit_symmetric with weights x^2 from the plain rounding only, then refines levels one at a
// time (coordinate descent, a few sweeps): llama.cpp's make_q3_quants with do_rmse (Q3_K).
float fit_symmetric_refined(int n, int nmax, const float* x, uint8_t* L);

// Asymmetric fit x ~= scale * l - min_out, l in [0, nmax], min_out >= 0, weighted by w (w = null:
// weights x^2). Candidate inverse scales are (nmax + rmin + rdelta * k) / (max - min), k = 0..nstep,
// where min is the best candidate's so far (as llama.cpp's make_qkx2_quants / make_qkx3_quants
// update it); the error is the weighted absolute error if use_mad, else weighted squared error.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
                    float rmin, float rdelta, int nstep, bool use_mad);

// Fit of non-negative values (sub-block scales or mins) x ~= scale * l, l in [0, nmax], weighted by
// w, with a refinement sweep: llama.cpp's make_qp_quants. Writes L, returns scale.
float fit_unsigned(int n, int nmax, const float* x, const float* w, uint8_t* L);

// Index of the table entry nearest to v in a sorted table of 16 int8 levels (a tie goes up).
int nearest_level(const int8_t* table, float v);

// Scale d of a group of n fitted as x ~= d * table[idx] (weights w): candidate mappings of the
// extreme element to +127 (clipped to the table's top), then to -127 + k for |k| <= ntry, each
// solved by least squares (llama.cpp's quantize_row_iq4_nl_impl per block). Callers pick the
// indices against d themselves, as llama.cpp does. 0 for an all-zero group.
float fit_nonlinear(int n, const int8_t* table, const float* x, const float* w, int ntry);

// llama.cpp's error weights under an importance vector: w[j] = importance[j] * sqrt(sigma2 + x[j]^2),
// sigma2 being a mean square of the values around (the row, the super-block).
void importance_weights(const float* x, const float* importance, float sigma2, int n, float* w);

// The inputs of llama.cpp's importance-weighted 32-element quantizers (quantize_row_q4_0_impl ..
// q5_1_impl), whose sigma2 is the mean square of the whole row: block() scales a block by 2^-e
// (its own group_exponent, returned) into xn and writes its weights into w, both the row's and the
// block's values at their own power-of-two scale (the fits depend only on ratios of the weights).
struct WeightedRow {
  WeightedRow(const float* x, int64_t n);
  int block(const float* x, const float* importance, int n, float* xn, float* w) const;
  int e = 0;            // the row's group_exponent
  float sigma2 = 0.0f;  // mean of (x * 2^-e)^2 over the row
};

// The fits of llama.cpp's importance-weighted 32-element quantizers over one row of n: each block
// fitted symmetric in -nmax..nmax-1 (Q4_0, Q5_0: fit_symmetric) or with a min in 0..nmax (Q4_1,
// Q5_1: fit_scale_min), weighted as WeightedRow says. store(b, d, m, L) gets block b's scale and
// offset at the values' own scale (x ~= d * (L - nmax), or d * L + m) and its levels.
template <typename Store>
void fit_blocks_weighted(const float* x, int64_t n, const float* importance, int nmax, bool with_min, Store&& store) {
  const WeightedRow row(x, n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float xn[32], w[32], mn = 0.0f;
    uint8_t L[32];
    const int e = row.block(x + b * 32, importance + b * 32, 32, xn, w);
    const float d = with_min ? fit_scale_min(32, nmax, xn, w, L, &mn, -0.9f, 0.05f, 36, false)
                             : fit_symmetric(32, nmax, xn, w, L);
    store(b, std::ldexp(d, e), std::ldexp(-mn, e), static_cast<const uint8_t*>(L));
  }
}

// sum x[j]^2 in index order (the order llama.cpp adds them in).
float sum_squares(const float* x, int64_t n);

// One row of n values through a format's importance-aware quantizer (importance: n weights).
using WeightedRowFn = void (*)(const float* x, void* y, int64_t n, const float* importance);

// The QuantizeRowsFn of the formats llama.cpp quantizes with its plain reference when given no
// importance: `plain` (the format's from_float_ref) over each row without importance, `weighted`
// over each row with it.
void quantize_rows_split(DType type, FromFloatFn plain, WeightedRowFn weighted, const float* x, void* y,
                         int64_t n_rows, int64_t n_per_row, const float* importance);

}  // namespace ox::quant
