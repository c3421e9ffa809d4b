// The codebooks of the IQ2 formats, as GGUF defines them (llama.cpp's ggml-common.h), generated
// into iq2_grids.cpp by scripts/gen_iq2_grids.py. Each entry packs the magnitudes of 8 consecutive
// elements, element j in byte j (little-endian); every byte is 8, 25 or 43.
#pragma once

#include <cstdint>

namespace ox::quant {

extern const uint64_t kIQ2XXSGrid[256];   // iq2xxs_grid: IQ2_XXS, 8-bit indices
extern const uint64_t kIQ2XSGrid[512];    // iq2xs_grid: IQ2_XS, 9-bit indices
extern const uint64_t kIQ2SGrid[1024];    // iq2s_grid: IQ2_S, 10-bit indices
// ksigns_iq2xs: 7 stored sign bits -> 8 sign bits (bit j set: element j negative); bit 7 makes the
// count of negatives even, which is how IQ2_XXS / IQ2_XS get 8 signs out of 7 bits.
extern const uint8_t kIQ2Signs[128];

// Magnitude of element j (0..7) of a codebook entry.
inline int iq2_grid_value(uint64_t entry, int j) { return static_cast<int>((entry >> (8 * j)) & 0xFF); }

}  // namespace ox::quant
