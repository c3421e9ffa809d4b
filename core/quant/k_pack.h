// Helpers shared by Q4_K and Q5_K: the 6-bit scale/min packing, the per-sub-block fit, and the
// 4-bit nibble layout (element 64*c + l in the low nibble of qs[32*c + l], +32 in the high one).
#pragma once

#include <cstdint>

namespace ox::quant {

inline int q4_k_nibble(const uint8_t* qs, int i) {
  const int c = i / 64, r = i % 64;
  return r < 32 ? (qs[32 * c + r] & 0xF) : (qs[32 * c + r - 32] >> 4);
}

// Inverse of unpack_scale_min_k4 for 8 (sc, m) pairs in 0..63.
void pack_scale_min_k4(const uint8_t* sc, const uint8_t* m, uint8_t* packed);

// Fits the 8 sub-blocks of 32 of one super-block (levels 0..nmax), quantizes their scales and
// mins to 6 bits; writes the packed scales and the super-block d / dmin (as floats) and levels L.
void fit_k_scales_mins(const float* x, int nmax, float rmin, float rdelta, int nstep, uint8_t* L,
                       uint8_t* packed_scales, float* d, float* dmin);

// The same under importance (llama.cpp's quantize_row_q4_K_impl / q5_K_impl): sub-blocks weighted
// by importance * sqrt(sigma2 + x^2) (importance: the super-block's 256 weights), then the scales
// and the mins each fitted to 6 bits weighted by their sub-block's total weight.
void fit_k_scales_mins_weighted(const float* x, const float* importance, int nmax, uint8_t* L,
                                uint8_t* packed_scales, float* d, float* dmin);

// Re-picks levels 0..nmax against the scales as stored (d, dmin already fp16-rounded).
void requantize_k_levels(const float* x, int nmax, float d, float dmin, const uint8_t* packed_scales,
                         uint8_t* L);

}  // namespace ox::quant
