// The tile (gemm) machinery shared by the SIMD128 gemm files: per-thread scratch, the packed
// "group" layout that prefill rewrites both operands into, and the rows x tokens register tile
// that runs over it. Formats only supply how to read one 32-element unit and its scales.
#pragma once

#include <wasm_simd128.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/simd128/util.h"

namespace ox::kernels::simd128::gemm {

// Prefill packs weights and activations as rows of i16 values. A unit is 32 elements sharing
// one float scale (a Q8_0 / Q4_0 block, or a 32-element slice of a K-quant super-block with its
// integer sub-block scales already multiplied in). Four consecutive units form a group of 16
// vectors: i32 lane j of vector 4m + q holds elements 8m + 2q and 8m + 2q + 1 of unit j (a 4x4
// transpose of i32 pairs), so i32x4.dot_i16x8_s summed over the group leaves unit j's integer
// dot in lane j, and one f32x4 multiply by (weight scales x activation scales, lane j = unit j)
// scales four units at once with no horizontal sum per block. A group is followed by its
// scale vector and kExtra "extra" f32x4 vectors whose lane products are added as they are (the
// min terms: m * s of Q4_1 / Q5_1, -dmin*m * d*bsum of the K-quants). Units left over when the
// count is not a multiple of 4 follow one at a time: 4 vectors in element order, a splat scale
// and extras (x, 0, 0, 0) so that summing the lanes counts them once.
constexpr int kGroupVecs = 16;
constexpr int group_stride(int extra) { return kGroupVecs + 1 + extra; }
constexpr int tail_stride(int extra) { return 4 + 1 + extra; }
inline int64_t packed_row_vecs(int64_t n_units, int extra) {
  return n_units / 4 * group_stride(extra) + n_units % 4 * tail_stride(extra);
}

// Register tile of the packed product. V8 allocates 15 xmm registers to wasm on x64 (xmm15 is
// its scratch): 2 x 4 keeps the 8 integer accumulators, two weight vectors, an activation and a
// product in registers; the 8 float accumulators, touched once per group, live on the stack.
// 3 x 3 and 4 x 2 measured the same (~21 GMAC/s on one Zen 4 thread), 2 x 6 and 1 x 8 slower.
constexpr int kTileRows = 2;
constexpr int kTileTokens = 4;
// From this many tokens prefill packs the weights (their unpacking is then shared by the tokens);
// below it each token runs the per-row dot against activations split once per call (measured:
// at 2 tokens the two paths are even, at 3 packing is 1.1-1.5x faster).
constexpr int64_t kPackMinTokens = 3;
// Weight rows packed at a time: a call may span thousands of rows (matmul gives each thread its
// whole share, so the activations are packed once), while 16 packed rows stay in L1/L2.
constexpr int64_t kPackRows = 16;

// 32 i16 values of a unit in element order.
struct Unit16 {
  v128_t v[4];
};

// Sign-extends the 32 int8 values of a unit (elements 0..15 in lo, 16..31 in hi).
inline Unit16 widen(v128_t lo, v128_t hi) {
  return {{wasm_i16x8_extend_low_i8x16(lo), wasm_i16x8_extend_high_i8x16(lo), wasm_i16x8_extend_low_i8x16(hi),
           wasm_i16x8_extend_high_i8x16(hi)}};
}

// Multiplies every value of a unit by an integer scale (products fit in i16 for every K-quant).
inline Unit16 scaled(Unit16 u, int scale) {
  const v128_t s = wasm_i16x8_splat(static_cast<int16_t>(scale));
  for (v128_t& v : u.v) v = wasm_i16x8_mul(v, s);
  return u;
}

// Writes the 16 vectors of a group from its four units (see the layout above).
inline void store_group(v128_t* out, const Unit16 u[4]) {
  for (int m = 0; m < 4; ++m) {
    const v128_t a = u[0].v[m], b = u[1].v[m], c = u[2].v[m], d = u[3].v[m];
    const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
    const v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
    out[4 * m + 0] = wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5);
    out[4 * m + 1] = wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7);
    out[4 * m + 2] = wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5);
    out[4 * m + 3] = wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7);
  }
}

// Packs one row of n_units units. unit(u) gives unit u as Unit16; scale(u, e) its scale (e = 0)
// and its extra terms (e = 1..kExtra). Returns the end of the row.
template <int kExtra, typename UnitFn, typename ScaleFn>
inline v128_t* pack_row(v128_t* out, int64_t n_units, UnitFn unit, ScaleFn scale) {
  int64_t u = 0;
  for (; u + 4 <= n_units; u += 4) {
    const Unit16 q[4] = {unit(u), unit(u + 1), unit(u + 2), unit(u + 3)};
    store_group(out, q);
    out += kGroupVecs;
    for (int e = 0; e <= kExtra; ++e) {
      *out++ = wasm_f32x4_make(scale(u, e), scale(u + 1, e), scale(u + 2, e), scale(u + 3, e));
    }
  }
  for (; u < n_units; ++u) {
    const Unit16 q = unit(u);
    for (int m = 0; m < 4; ++m) *out++ = q.v[m];
    *out++ = wasm_f32x4_splat(scale(u, 0));
    for (int e = 1; e <= kExtra; ++e) *out++ = wasm_f32x4_make(scale(u, e), 0.0f, 0.0f, 0.0f);
  }
  return out;
}

// One group (kLen = 16) or single unit (kLen = 4) of an R x T tile: the integer dots of kLen
// vectors, then the float step with the scale and extra vectors that follow them.
template <int R, int T, int kExtra, int kLen>
inline void tile_step(const v128_t* (&wp)[R], const v128_t* (&ap)[T], v128_t (&f)[R][T]) {
  v128_t acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = wasm_i32x4_splat(0);
  // Rolled: fully unrolled, LLVM hoists the group's R*16 + T*16 loads to its top and V8 spills
  // nearly all of them (measured 2x slower).
#pragma clang loop unroll(disable)
  for (int k = 0; k < kLen; ++k) {
    v128_t wv[R];
    for (int r = 0; r < R; ++r) wv[r] = wp[r][k];
    for (int t = 0; t < T; ++t) {
      const v128_t av = ap[t][k];
      for (int r = 0; r < R; ++r) acc[r][t] = wasm_i32x4_add(acc[r][t], wasm_i32x4_dot_i16x8(wv[r], av));
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      const v128_t s = wasm_f32x4_mul(wp[r][kLen], ap[t][kLen]);
      f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc[r][t]), s));
      for (int e = 1; e <= kExtra; ++e)
        f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wp[r][kLen + e], ap[t][kLen + e]));
    }
  }
  for (int r = 0; r < R; ++r) wp[r] += kLen + 1 + kExtra;
  for (int t = 0; t < T; ++t) ap[t] += kLen + 1 + kExtra;
}

// One R x T tile: y[t * y_stride + r] = the packed product of weight row r and activation row t.
// Rows are w_row / a_row vectors apart and hold n_units units (groups, then single units).
template <int R, int T, int kExtra>
void tile(const v128_t* w, int64_t w_row, const v128_t* a, int64_t a_row, int64_t n_units, float* y,
          int64_t y_stride) {
  const v128_t* wp[R];
  const v128_t* ap[T];
  for (int r = 0; r < R; ++r) wp[r] = w + r * w_row;
  for (int t = 0; t < T; ++t) ap[t] = a + t * a_row;
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  for (int64_t g = 0; g < n_units / 4; ++g) tile_step<R, T, kExtra, kGroupVecs>(wp, ap, f);
  for (int64_t u = 0; u < n_units % 4; ++u) tile_step<R, T, kExtra, 4>(wp, ap, f);
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum_f32(f[r][t]);
}

using TileFn = void (*)(const v128_t*, int64_t, const v128_t*, int64_t, int64_t, float*, int64_t);

// The tile function for nr <= kTileRows rows and nt <= kTileTokens tokens: a table of every
// instantiation, built at compile time.
template <int kExtra>
TileFn tile_fn(int64_t nr, int64_t nt) {
  static constexpr auto table = []<int... i>(std::integer_sequence<int, i...>) {
    return std::array<TileFn, sizeof...(i)>{tile<i / kTileTokens + 1, i % kTileTokens + 1, kExtra>...};
  }(std::make_integer_sequence<int, kTileRows * kTileTokens>{});
  return table[static_cast<size_t>((nr - 1) * kTileTokens + (nt - 1))];
}

// The packed product of n_rows weight rows and n_tokens activation rows, tile by tile.
template <int kExtra>
void packed_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_units, float* y,
                    int64_t y_stride) {
  const int64_t row = packed_row_vecs(n_units, kExtra);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
    const int64_t nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTileTokens) {
      const int64_t nt = n_tokens - t0 < kTileTokens ? n_tokens - t0 : kTileTokens;
      tile_fn<kExtra>(nr, nt)(w + r0 * row, row, a + t0 * row, row, n_units, y + t0 * y_stride + r0, y_stride);
    }
  }
}

// Per-thread scratch, grown on demand and kept (the shapes repeat every layer).
enum class Slot { kWeights, kActs, kScales, kTables };
v128_t* scratch(Slot slot, int64_t n_vecs);

// Activations packed for the prefill path: every token's row of n elements (Q8_0, Q8_1 or Q8_K
// rows a_stride bytes apart). Q8_1 carries its s field as one extra; Q8_K carries the bsums its
// weight format's min terms pair with: none, one per 32 elements (Q4_K, Q5_K) or two (Q2_K).
enum class ActExtra { kNone, kBsum32, kBsum16 };
const v128_t* pack_acts_q8_0(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens);
const v128_t* pack_acts_q8_1(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens);
const v128_t* pack_acts_q8_k(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, ActExtra extra);

// One token's activations for the per-row (decode) path: the quants of every 16-byte chunk as
// even / odd i16 halves (split_s8; chunk c at q[2c], q[2c + 1]) and, for Q8_0 / Q8_1 rows, each
// block's d (and Q8_1's s) as float and the sum of its quants.
struct SplitActs {
  const v128_t* q;
  const float* d;
  const float* s;
  const int32_t* sum;
};
SplitActs split_acts_block32(int64_t n, const uint8_t* a, bool q8_1);
const v128_t* split_acts_q8_k(int64_t n, const uint8_t* a);

}  // namespace ox::kernels::simd128::gemm
