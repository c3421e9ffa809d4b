// The formats whose nibbles index a 16-entry codebook of signed bytes (IQ4_NL, MXFP4) against
// Q8_0: where a block keeps its nibbles and its scale, and that scale as a float. One set of tile,
// decode and few-token kernels (both x86 tables) serves both formats through these facts.
// The facts are data only and the helpers static, so no COMDAT copy is shared across ISAs.
#pragma once

#include <immintrin.h>

#include <cstddef>  // offsetof
#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2::codebook {

// fp16 d at offset 0, nibbles at 2.
struct IQ4_NL {
  static constexpr uint64_t kBytes = sizeof(BlockIQ4_NL), kQs = offsetof(BlockIQ4_NL, qs);
  static constexpr const int8_t* kValues = kIQ4NLValues;
  static constexpr bool kExponentScale = false;
};

// E8M0 byte e at offset 0 (scale 2^(e - 128), mxfp4_scale), nibbles at 1; the codebook is the
// doubled E2M1 values, the halving being in the scale.
struct MXFP4 {
  static constexpr uint64_t kBytes = sizeof(BlockMXFP4), kQs = offsetof(BlockMXFP4, qs);
  static constexpr const int8_t* kValues = kMXFP4Values;
  static constexpr bool kExponentScale = true;
};

// The scales of 8 blocks, lane r = block blk[r]'s: the float the scalar reference multiplies by.
template <class C>
static inline __m256 scales(const uint8_t* const blk[8]) {
  if constexpr (C::kExponentScale) {
    return mxfp4_scales(_mm256_setr_epi32(blk[0][0], blk[1][0], blk[2][0], blk[3][0], blk[4][0], blk[5][0], blk[6][0],
                                          blk[7][0]));
  } else {
    return tile::gather_halves(blk, 0);
  }
}

// The same for the blocks of rows 0-3 at w0 + r * stride and rows 4-7 at w4 + r * stride (two
// bases and three multiples of the stride, which the decode kernels keep in registers).
template <class C>
static inline __m256 scales_strided(const uint8_t* w0, const uint8_t* w4, uint64_t stride) {
  if constexpr (C::kExponentScale) {
    return mxfp4_scales(_mm256_setr_epi32(w0[0], w0[stride], w0[2 * stride], w0[3 * stride], w4[0], w4[stride],
                                          w4[2 * stride], w4[3 * stride]));
  } else {
    return tile::gather_halves_strided(w0, w4, stride);
  }
}

// The codebook in both 128-bit lanes, for vpshufb.
template <class C>
static inline __m256i table() {
  return _mm256_broadcastsi128_si256(load128(C::kValues));
}

// The nibbles of 8 blocks (qs[r] = row r's) through the codebook, transposed as the panel loaders
// of gemm_pack.h: q[k] lane r = elements 4k..4k+3 of row r.
template <class C>
static inline void values(const uint8_t* const qs[8], __m256i q[8]) {
  pack::nibbles(qs, q);
  const __m256i t = table<C>();
  for (int k = 0; k < 8; ++k) q[k] = _mm256_shuffle_epi8(t, q[k]);
}

// One block's 32 values in element order.
template <class C>
static inline __m256i block_values(const uint8_t* blk) {
  return _mm256_shuffle_epi8(table<C>(), unpack_nibbles(blk + C::kQs));
}

}  // namespace ox::kernels::avx2::codebook
