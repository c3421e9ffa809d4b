// The tile (gemm) machinery shared by the SIMD128 gemm files: per-thread scratch, the packed
// "group" layout that prefill rewrites both operands into, and the rows x tokens register tile
// that runs over it. Formats only supply how to read one 32-element unit and its scales.
#pragma once

#include <wasm_simd128.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
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
// A call takes every token (KernelTable::gemm_all_tokens): each block of kPackRows weight rows is
// unpacked once and then passes over the packed tokens kPassActBytes at a time, which stay in L2
// while the block's rows use them. Split into matmul's 256 KB chunks of activation rows instead,
// a 128-token prefill unpacks each 8192-wide matrix five times (30-token chunks, each with an edge).
constexpr int64_t kPassActBytes = 128 * 1024;
// Tokens per pass for packed activation rows of a_row_vecs vectors: a multiple of the tile's tokens
// (so only the last pass has an edge), at least one tile.
inline int64_t pass_tokens(int64_t a_row_vecs) {
  const int64_t t = kPassActBytes / (a_row_vecs * 16) / kTileTokens * kTileTokens;
  return t > kTileTokens ? t : kTileTokens;
}

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

// The first 16 values times s0, the last 16 times s1 (two 16-element sub-blocks per unit).
inline Unit16 scaled2(Unit16 u, int s0, int s1) {
  const v128_t a = wasm_i16x8_splat(static_cast<int16_t>(s0)), b = wasm_i16x8_splat(static_cast<int16_t>(s1));
  return {{wasm_i16x8_mul(u.v[0], a), wasm_i16x8_mul(u.v[1], a), wasm_i16x8_mul(u.v[2], b), wasm_i16x8_mul(u.v[3], b)}};
}

// Packed rows are stored interleaved in blocks of the tile's size (kTileRows weight rows,
// kTileTokens activation rows; fewer in the last block): vector v of row j of a block of n rows
// is at block + v * n + j. A tile then reads all its rows at constant offsets from one pointer,
// which V8 folds into the loads (one address computation per row and vector costs as much as the
// load). Where row r of n_rows packed rows `row_vecs` vectors long starts, and its step.
struct PackedRow {
  v128_t* out;
  int64_t step;
};
inline PackedRow packed_row(v128_t* base, int64_t row_vecs, int64_t r, int64_t n_rows, int64_t block) {
  const int64_t first = r / block * block;
  return {base + first * row_vecs + (r - first), n_rows - first < block ? n_rows - first : block};
}

// Writes the 16 vectors of a group from its four units (see the layout above), `step` apart.
inline void store_group(v128_t* out, int64_t step, const Unit16 u[4]) {
  for (int m = 0; m < 4; ++m) {
    const v128_t a = u[0].v[m], b = u[1].v[m], c = u[2].v[m], d = u[3].v[m];
    const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
    const v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
    out[(4 * m + 0) * step] = wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5);
    out[(4 * m + 1) * step] = wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7);
    out[(4 * m + 2) * step] = wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5);
    out[(4 * m + 3) * step] = wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7);
  }
}

// Packs one row of n_units units at `row` (see packed_row). unit(u) gives unit u as Unit16;
// scale(u, e) its scale (e = 0) and its extra terms (e = 1..kExtra); scales4(u, e), where given,
// those of units u..u + 3 as one f32x4 (the same values: four conversions in one).
template <int kExtra, typename UnitFn, typename ScaleFn, typename Scales4Fn = std::nullptr_t>
inline void pack_row(PackedRow row, int64_t n_units, UnitFn unit, ScaleFn scale, Scales4Fn scales4 = nullptr) {
  v128_t* out = row.out;
  const int64_t step = row.step;
  auto put = [&](v128_t v) {
    *out = v;
    out += step;
  };
  int64_t u = 0;
  for (; u + 4 <= n_units; u += 4) {
    const Unit16 q[4] = {unit(u), unit(u + 1), unit(u + 2), unit(u + 3)};
    store_group(out, step, q);
    out += kGroupVecs * step;
    for (int e = 0; e <= kExtra; ++e) {
      if constexpr (std::is_same_v<Scales4Fn, std::nullptr_t>) {
        put(wasm_f32x4_make(scale(u, e), scale(u + 1, e), scale(u + 2, e), scale(u + 3, e)));
      } else {
        put(scales4(u, e));
      }
    }
  }
  for (; u < n_units; ++u) {
    const Unit16 q = unit(u);
    for (int m = 0; m < 4; ++m) put(q.v[m]);
    put(wasm_f32x4_splat(scale(u, 0)));
    for (int e = 1; e <= kExtra; ++e) put(wasm_f32x4_make(scale(u, e), 0.0f, 0.0f, 0.0f));
  }
}

// The integer dots of kLen vectors of an R x T tile over blocks of R weight rows and T activation
// rows (interleaved, see packed_row), added to acc.
template <int R, int T, int kLen>
inline void tile_dots(const v128_t* wp, const v128_t* ap, v128_t (&acc)[R][T]) {
  // Rolled: fully unrolled, LLVM hoists the group's R*16 + T*16 loads to its top and V8 spills
  // nearly all of them (measured 2x slower).
#pragma clang loop unroll(disable)
  for (int k = 0; k < kLen; ++k, wp += R, ap += T) {  // the tile's R weight vectors k, then its T activation vectors k
    v128_t wv[R];
    for (int r = 0; r < R; ++r) wv[r] = wp[r];
    for (int t = 0; t < T; ++t) {
      const v128_t av = ap[t];
      for (int r = 0; r < R; ++r) acc[r][t] = wasm_i32x4_add(acc[r][t], wasm_i32x4_dot_i16x8(wv[r], av));
    }
  }
}

// f += acc times the scale vectors at wp[0..R), ap[0..T) (lane products).
template <int R, int T>
inline void tile_scale(const v128_t* wp, const v128_t* ap, const v128_t (&acc)[R][T], v128_t (&f)[R][T]) {
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t)
      f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc[r][t]), wasm_f32x4_mul(wp[r], ap[t])));
}

// f += the lane products of the kExtra extra vectors at wp, ap.
template <int R, int T, int kExtra>
inline void tile_extras(const v128_t* wp, const v128_t* ap, v128_t (&f)[R][T]) {
  for (int e = 0; e < kExtra; ++e)
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wp[e * R + r], ap[e * T + t]));
}

// One group (kLen = 16) or single unit (kLen = 4) of a tile: its dots, then the float step with
// the scale and extra vectors that follow them.
template <int R, int T, int kExtra, int kLen>
inline void tile_step(const v128_t*& wp, const v128_t*& ap, v128_t (&f)[R][T]) {
  v128_t acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = wasm_i32x4_splat(0);
  tile_dots<R, T, kLen>(wp, ap, acc);
  tile_scale<R, T>(wp + kLen * R, ap + kLen * T, acc, f);
  tile_extras<R, T, kExtra>(wp + (kLen + 1) * R, ap + (kLen + 1) * T, f);
  wp += (kLen + 1 + kExtra) * R;
  ap += (kLen + 1 + kExtra) * T;
}

// Two groups that share their scales (the halves of a K-quant super-block: one d per weight row,
// one per token), so their integer dots add up before one float step (a lane stays below 2^26:
// see gemm_kquant.cpp). The first group's scale vectors are not read.
template <int R, int T, int kExtra>
inline void tile_step_pair(const v128_t*& wp, const v128_t*& ap, v128_t (&f)[R][T]) {
  constexpr int kStride = group_stride(kExtra);
  v128_t acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = wasm_i32x4_splat(0);
  tile_dots<R, T, kGroupVecs>(wp, ap, acc);
  tile_dots<R, T, kGroupVecs>(wp + kStride * R, ap + kStride * T, acc);
  tile_scale<R, T>(wp + (kStride + kGroupVecs) * R, ap + (kStride + kGroupVecs) * T, acc, f);
  tile_extras<R, T, kExtra>(wp + (kGroupVecs + 1) * R, ap + (kGroupVecs + 1) * T, f);
  tile_extras<R, T, kExtra>(wp + (kStride + kGroupVecs + 1) * R, ap + (kStride + kGroupVecs + 1) * T, f);
  wp += 2 * kStride * R;
  ap += 2 * kStride * T;
}

// One R x T tile: y[t * y_stride + r] = the packed product of weight row r and activation row t
// of the blocks at w (R rows) and a (T rows), each row holding n_units units (groups, then single
// units). With kPairs, groups go two at a time (tile_step_pair; n_units a multiple of 8).
template <int R, int T, int kExtra, bool kPairs>
void tile(const v128_t* w, const v128_t* a, int64_t n_units, float* y, int64_t y_stride) {
  const v128_t* wp = w;
  const v128_t* ap = a;
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  if constexpr (kPairs) {
    for (int64_t g = 0; g < n_units / 8; ++g) tile_step_pair<R, T, kExtra>(wp, ap, f);
  } else {
    for (int64_t g = 0; g < n_units / 4; ++g) tile_step<R, T, kExtra, kGroupVecs>(wp, ap, f);
    for (int64_t u = 0; u < n_units % 4; ++u) tile_step<R, T, kExtra, 4>(wp, ap, f);
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum_f32(f[r][t]);
}

using TileFn = void (*)(const v128_t*, const v128_t*, int64_t, float*, int64_t);

// The tile function for nr <= kTileRows rows and nt <= kTileTokens tokens: a table of every
// instantiation, built at compile time.
template <int kExtra, bool kPairs>
TileFn tile_fn(int64_t nr, int64_t nt) {
  static constexpr auto table = []<int... i>(std::integer_sequence<int, i...>) {
    return std::array<TileFn, sizeof...(i)>{tile<i / kTileTokens + 1, i % kTileTokens + 1, kExtra, kPairs>...};
  }(std::make_integer_sequence<int, kTileRows * kTileTokens>{});
  return table[static_cast<size_t>((nr - 1) * kTileTokens + (nt - 1))];
}

// The packed product of n_rows weight rows and n_tokens activation rows (each packed in blocks
// of the tile's size, see packed_row), tile by tile. kPairs: see tile.
template <int kExtra, bool kPairs = false>
void packed_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_units, float* y,
                    int64_t y_stride) {
  const int64_t row = packed_row_vecs(n_units, kExtra);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
    const int64_t nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTileTokens) {
      const int64_t nt = n_tokens - t0 < kTileTokens ? n_tokens - t0 : kTileTokens;
      tile_fn<kExtra, kPairs>(nr, nt)(w + r0 * row, a + t0 * row, n_units, y + t0 * y_stride + r0, y_stride);
    }
  }
}

// packed_product over n_tokens packed activation rows in passes of pass_tokens (see kPassActBytes).
template <int kExtra, bool kPairs = false>
void packed_product_passes(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_units,
                           float* y, int64_t y_stride) {
  const int64_t row = packed_row_vecs(n_units, kExtra), pass = pass_tokens(row);
  for (int64_t t0 = 0; t0 < n_tokens; t0 += pass) {
    const int64_t nt = n_tokens - t0 < pass ? n_tokens - t0 : pass;
    packed_product<kExtra, kPairs>(w, n_rows, a + t0 * row, nt, n_units, y + t0 * y_stride, y_stride);
  }
}

// Per-thread scratch, grown on demand and kept (the shapes repeat every layer).
enum class Slot { kWeights, kActs, kScales, kTables, kInterleaved };
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
