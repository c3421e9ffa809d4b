// The tile walk shared by the NEON gemm kernels (plain and +dotprod): rows in groups of four,
// one float32x4 per token whose lane r is row r's result, tokens in tiles of kMaxT, kMaxT/2, ..., 1.
// Internal linkage throughout (see util.h: the two folders use different -march flags).
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/neon/util.h"

namespace ox::kernels::neon_common {
namespace {

// Rows per group: the four lanes of a result vector.
constexpr int kTileRows = 4;

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// The fp16 field at byte `off` of each of four blocks, as float lanes 0..3 (one fcvtl).
inline float32x4_t load_fp16x4(const uint8_t* const x[kTileRows], uint64_t off) {
  uint16x4_t h = vdup_n_u16(0);
  h = vset_lane_u16(load_u16(x[0] + off), h, 0);
  h = vset_lane_u16(load_u16(x[1] + off), h, 1);
  h = vset_lane_u16(load_u16(x[2] + off), h, 2);
  h = vset_lane_u16(load_u16(x[3] + off), h, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

// The combined reduction: lane r = the sum of the four lanes of d[r]. Three pairwise adds
// finish four rows at once, where one horizontal sum per row would take two each plus a move.
inline int32x4_t reduce4(const int32x4_t d[kTileRows]) {
  return vpaddq_s32(vpaddq_s32(d[0], d[1]), vpaddq_s32(d[2], d[3]));
}

// Calls fn(std::integral_constant<int, k>) for k = 0..N-1, so per-k shifts stay immediates.
template <int N, typename Fn>
inline void unroll(Fn&& fn) {
  [&]<int... k>(std::integer_sequence<int, k...>) {
    (fn(std::integral_constant<int, k>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

// v >> s for s = 0..7 (vshrq_n needs s >= 1).
template <int s>
inline uint8x16_t shr_u8(uint8x16_t v) {
  if constexpr (s == 0) {
    return v;
  } else {
    return vshrq_n_u8(v, s);
  }
}

// Writes lanes 0..nr-1 of out[t] to y[t * y_stride + 0..nr-1]; the rest of y is never touched.
template <int T>
inline void store_tile(const float32x4_t out[T], int nr, float* y, int64_t y_stride) {
  for (int t = 0; t < T; ++t) {
    float* yt = y + t * y_stride;
    if (nr == kTileRows) {
      vst1q_f32(yt, out[t]);
    } else {
      float tmp[kTileRows];
      vst1q_f32(tmp, out[t]);
      for (int r = 0; r < nr; ++r) yt[r] = tmp[r];
    }
  }
}

// Token tiles of T for as long as T fit, then the remainder (< T) as T/2, T/4, ..., 1: few
// instantiations, and the rows' blocks stay in L1 across the extra passes.
template <int T, typename Tile>
inline void run_token_tiles(const Tile& tile, const uint8_t* const rows[kTileRows], int nr, const uint8_t* a,
                            uint64_t a_stride, int64_t& t0, int64_t n_tokens, float* y, int64_t y_stride) {
  for (; t0 + T <= n_tokens; t0 += T) {
    float32x4_t out[T];
    tile.template run<T>(rows, a + static_cast<uint64_t>(t0) * a_stride, a_stride, out);
    store_tile<T>(out, nr, y + t0 * y_stride, y_stride);
  }
  if constexpr (T > 1) run_token_tiles<T / 2>(tile, rows, nr, a, a_stride, t0, n_tokens, y, y_stride);
}

// The GemmFn contract over any n_rows x n_tokens. A short last row group repeats its last row
// (computed, never stored) so every tile has four valid row pointers. Rows are the outer loop:
// four rows' blocks stay in L1 while the tokens (L2-resident, see core/ops/matmul.cpp) pass.
// Tile::run<T>(rows, a, a_stride, out) fills out[t] lane r with row r . token t.
template <int kMaxT, typename Tile>
inline void gemm_tiles(const Tile& tile, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
    const int nr = n_rows - r0 < kTileRows ? static_cast<int>(n_rows - r0) : kTileRows;
    const uint8_t* rows[kTileRows];
    for (int k = 0; k < kTileRows; ++k) {
      rows[k] = w + static_cast<uint64_t>(r0 + (k < nr ? k : nr - 1)) * w_stride;
    }
    int64_t t0 = 0;
    run_token_tiles<kMaxT>(tile, rows, nr, a, a_stride, t0, n_tokens, y + r0, y_stride);
  }
}

}  // namespace
}  // namespace ox::kernels::neon_common
