// Error-minimising scale searches shared by the K-quant and IQ4 weight quantizers: for a group of
// values, try a few candidate scales, pick levels for each, then solve the weighted least-squares
// scale (and min) for those levels; keep the candidate with the smallest weighted error.
#pragma once

#include <cstdint>

namespace ox::quant {

// Power-of-two normalisation: the searches square and cube values, which overflows float for
// |x| beyond ~1e12 and underflows for tiny ones. Quantizers fit x * 2^-e (exact) with e from
// group_exponent, then multiply the scales by 2^e: results are unchanged for ordinary data.
int group_exponent(const float* x, int n);              // max|x| * 2^-e in [0.5, 1); 0 if all zero
void scale_pow2(const float* x, float* out, int n, int e);  // out[i] = x[i] * 2^-e

// Below this magnitude a group is treated as all zeros (its scale would be meaningless).
inline constexpr float kGroupMaxEps = 1e-15f;

// Symmetric fit x ~= scale * l, l in [-nmax, nmax-1], weighted by w (w = null: weights x^2).
// Writes L[i] = l + nmax (0 .. 2*nmax-1) and returns scale (may be negative).
float fit_symmetric(int n, int nmax, const float* x, const float* w, uint8_t* L);

// Like fit_symmetric with weights x^2, then refines levels one at a time (coordinate descent on
// the weighted error, a few sweeps): used where few levels make each choice matter (Q3_K).
float fit_symmetric_refined(int n, int nmax, const float* x, uint8_t* L);

// Asymmetric fit x ~= scale * l - min_out, l in [0, nmax], min_out >= 0, weighted by w.
// Candidate inverse scales are (nmax + rmin + rdelta * k) / (max - min), k = 0..nstep; the error is
// the weighted absolute error if use_mad, else weighted squared error. Returns scale.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
                    float rmin, float rdelta, int nstep, bool use_mad);

// Index of the table entry nearest to v in a sorted table of 16 int8 levels.
int nearest_level(const int8_t* table, float v);

// Fits x ~= d * table[idx] for a group of n (weights w), trying scales around max/table[0] in
// 2*ntry+1 steps; writes the 4-bit indices to idx and returns d.
float fit_nonlinear(int n, const int8_t* table, const float* x, const float* w, uint8_t* idx, int ntry);

}  // namespace ox::quant
