// The byte-group prefill of gemm_i7.h: the activation packing, the SIMD128 tiles (the edges, and the
// bodies of the i7_tile and i7_superblock_tile slots in the plain module) and the tile loop.
#include "kernels/simd128/gemm_i7.h"

#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/simd128/relaxed_slots.h"

namespace ox::kernels::simd128::gemm {

const v128_t* pack_acts_q8_0_i7(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int offset) {
  const int64_t n_groups = n / 32 / 4, row = n_groups * kI7ActStride;
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  const Fp16Consts fc = fp16_consts();
  const v128_t neg_offset = wasm_i32x4_splat(-offset);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const BlockQ8_0* x = reinterpret_cast<const BlockQ8_0*>(a + static_cast<uint64_t>(t) * a_stride);
    const PackedRow pr = packed_row(out, row, t, n_tokens, kTileTokens);
    v128_t* o = pr.out;
    for (int64_t g = 0; g < n_groups; ++g, o += kI7ActStride * pr.step) {
      const BlockQ8_0* b = x + 4 * g;
      UnitBytes q[4];
      v128_t sums[4];
      for (int j = 0; j < 4; ++j) {
        q[j] = {load(b[j].qs), load(b[j].qs + 16)};
        const v128_t pairs = wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(q[j].lo), wasm_i16x8_extadd_pairwise_i8x16(q[j].hi));
        sums[j] = wasm_i32x4_extadd_pairwise_i16x8(pairs);
      }
      store_i7_group(o, pr.step, q);
      o[kI7GroupVecs * pr.step] = fp16x4_to_f32(gather_halves4(&b[0].d, &b[1].d, &b[2].d, &b[3].d), fc);
      o[(kI7GroupVecs + 1) * pr.step] = wasm_i32x4_mul(hsums4_i32(sums), neg_offset);
    }
  }
  return out;
}

const v128_t* pack_acts_q8_k_i7(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens) {
  const int64_t nb = n / kQK_K, row = nb * kI7SuperActStride;
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const BlockQ8_K* x = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride);
    const PackedRow pr = packed_row(out, row, t, n_tokens, kTileTokens);
    v128_t* o = pr.out;
    for (int64_t i = 0; i < nb; ++i, o += kI7SuperActStride * pr.step) {
      float d;
      std::memcpy(&d, reinterpret_cast<const uint8_t*>(&x[i].d), sizeof(d));
      int16_t bsums[kQK_K / 16];
      std::memcpy(bsums, reinterpret_cast<const uint8_t*>(x[i].bsums), sizeof(bsums));
      for (int g = 0; g < 2; ++g) {
        UnitBytes q[4];
        float extra[4];
        for (int j = 0; j < 4; ++j) {
          const int u = 4 * g + j;
          const int8_t* p = x[i].qs + 32 * u;
          q[j] = {load(p), load(p + 16)};
          // pack_acts_q8_k's kBsum32 extra: d times the unit's sum
          extra[j] = d * static_cast<float>(bsums[2 * u] + bsums[2 * u + 1]);
        }
        store_i7_group(o + g * kI7GroupVecs * pr.step, pr.step, q);
        o[(kI7SuperVecs + 1 + g) * pr.step] = wasm_f32x4_make(extra[0], extra[1], extra[2], extra[3]);
      }
      o[kI7SuperVecs * pr.step] = wasm_f32x4_splat(d);
    }
  }
  return out;
}

const v128_t* pack_acts_q8_k_u8(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int offset) {
  const int64_t nb = n / kQK_K, row = nb * kU8SuperActStride;
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const BlockQ8_K* x = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride);
    const PackedRow pr = packed_row(out, row, t, n_tokens, kTileTokens);
    v128_t* o = pr.out;
    for (int64_t i = 0; i < nb; ++i, o += kU8SuperActStride * pr.step) {
      float d;
      std::memcpy(&d, reinterpret_cast<const uint8_t*>(&x[i].d), sizeof(d));
      for (int g = 0; g < 2; ++g) {
        UnitBytes q[4];
        v128_t sums[4];
        for (int j = 0; j < 4; ++j) {
          const int8_t* p = x[i].qs + 32 * (4 * g + j);
          q[j] = {load(p), load(p + 16)};
          // The unit's sum from its quants, not from bsums: the offset must match the bytes exactly.
          sums[j] = wasm_i32x4_extadd_pairwise_i16x8(
              wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(q[j].lo), wasm_i16x8_extadd_pairwise_i8x16(q[j].hi)));
        }
        store_i7_group(o + g * kI7GroupVecs * pr.step, pr.step, q);
        o[(kI7SuperVecs + 1 + g) * pr.step] = wasm_i32x4_mul(hsums4_i32(sums), wasm_i32x4_splat(-offset));
      }
      o[kI7SuperVecs * pr.step] = wasm_f32x4_splat(d);
    }
  }
  return out;
}

namespace {

// The unit dots of an R x T tile over one byte group in SIMD128: the bytes widened to i16 (weights
// unsigned, activations signed) and multiplied by i32x4.dot_i16x8_s. The low halves' dots hold
// units 0, 1 (two lanes each), the high halves' units 2, 3; one pairwise step leaves unit j's exact
// integer dot in lane j of units[r][t]. kMulAdd: the same integers by i16x8.mul (a product of a
// byte 0..255 and one of -128..127 fits an i16 lane) and a pairwise widening, so that the u8_tile
// slot's SIMD128 body is code of its own (no linker pass may merge it with i7_tile's: the splice
// needs both).
template <int R, int T, bool kMulAdd = false>
inline void i7_group_units(const v128_t* wp, const v128_t* ap, v128_t (&units)[R][T]) {
  v128_t lo[R][T], hi[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) lo[r][t] = hi[r][t] = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
  for (int k = 0; k < kI7GroupVecs; ++k, wp += R, ap += T) {
    v128_t wl[R], wh[R];
    for (int r = 0; r < R; ++r) {
      wl[r] = wasm_u16x8_extend_low_u8x16(wp[r]);
      wh[r] = wasm_u16x8_extend_high_u8x16(wp[r]);
    }
    for (int t = 0; t < T; ++t) {
      const v128_t al = wasm_i16x8_extend_low_i8x16(ap[t]), ah = wasm_i16x8_extend_high_i8x16(ap[t]);
      for (int r = 0; r < R; ++r) {
        if constexpr (kMulAdd) {
          lo[r][t] = wasm_i32x4_add(lo[r][t], wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_mul(wl[r], al)));
          hi[r][t] = wasm_i32x4_add(hi[r][t], wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_mul(wh[r], ah)));
        } else {
          lo[r][t] = wasm_i32x4_add(lo[r][t], wasm_i32x4_dot_i16x8(wl[r], al));
          hi[r][t] = wasm_i32x4_add(hi[r][t], wasm_i32x4_dot_i16x8(wh[r], ah));
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t)
      units[r][t] = wasm_i32x4_add(wasm_i32x4_shuffle(lo[r][t], hi[r][t], 0, 2, 4, 6),
                                   wasm_i32x4_shuffle(lo[r][t], hi[r][t], 1, 3, 5, 7));
}

// An R x T tile of byte groups in SIMD128: each group's unit dots plus the activations' offsets,
// then the float step of gemm_tile.h's tile_scale and its horizontal sum, in the same order.
template <int R, int T, bool kMulAdd = false>
void i7_tile_simd128(int64_t n_groups, const v128_t* w, const v128_t* a, float* y, int64_t y_stride) {
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  for (int64_t g = 0; g < n_groups; ++g, w += kI7WeightStride * R, a += kI7ActStride * T) {
    v128_t units[R][T];
    i7_group_units<R, T, kMulAdd>(w, a, units);
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        const v128_t acc = wasm_i32x4_add(units[r][t], a[(kI7GroupVecs + 1) * T + t]);
        f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc),
                                                         wasm_f32x4_mul(w[kI7GroupVecs * R + r], a[kI7GroupVecs * T + t])));
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum_f32(f[r][t]);
}

// An R x T tile of byte super-blocks in SIMD128: per group the unit dots times the sub-block scales
// (the low i16 of each i32 lane of the scale vector), the two groups added, then tile_step_pair's
// float steps (gemm_tile.h: the scaled sum, then group 0's and group 1's min terms) and the
// horizontal sum, in the same order.
template <int R, int T>
void i7_superblock_tile_simd128(int64_t nb, const v128_t* w, const v128_t* a, float* y, int64_t y_stride) {
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  const v128_t low16 = wasm_i32x4_splat(0xFFFF);
  for (int64_t i = 0; i < nb; ++i, w += kI7SuperWeightStride * R, a += kI7SuperActStride * T) {
    v128_t acc[R][T];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) acc[r][t] = wasm_i32x4_splat(0);
    for (int g = 0; g < 2; ++g) {
      v128_t units[R][T];
      i7_group_units<R, T>(w + g * kI7GroupVecs * R, a + g * kI7GroupVecs * T, units);
      for (int r = 0; r < R; ++r) {
        const v128_t scale = wasm_v128_and(w[(kI7SuperVecs + g) * R + r], low16);
        for (int t = 0; t < T; ++t) acc[r][t] = wasm_i32x4_add(acc[r][t], wasm_i32x4_mul(units[r][t], scale));
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc[r][t]),
                                                         wasm_f32x4_mul(w[(kI7SuperVecs + 2) * R + r], a[kI7SuperVecs * T + t])));
        for (int g = 0; g < 2; ++g)
          f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(w[(kI7SuperVecs + 3 + g) * R + r], a[(kI7SuperVecs + 1 + g) * T + t]));
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum_f32(f[r][t]);
}

using I7TileSimd128 = void (*)(int64_t, const v128_t*, const v128_t*, float*, int64_t);

I7TileSimd128 edge_tile(int64_t nr, int64_t nt) {
  static constexpr I7TileSimd128 table[kTileRows][kTileTokens] = {
      {i7_tile_simd128<1, 1>, i7_tile_simd128<1, 2>, i7_tile_simd128<1, 3>, i7_tile_simd128<1, 4>},
      {i7_tile_simd128<2, 1>, i7_tile_simd128<2, 2>, i7_tile_simd128<2, 3>, i7_tile_simd128<2, 4>},
  };
  static_assert(kTileRows == 2 && kTileTokens == 4, "the tables here and the .wat tiles are 2 x 4");
  return table[nr - 1][nt - 1];
}

I7TileSimd128 edge_superblock_tile(int64_t nr, int64_t nt) {
  static constexpr I7TileSimd128 table[kTileRows][kTileTokens] = {
      {i7_superblock_tile_simd128<1, 1>, i7_superblock_tile_simd128<1, 2>, i7_superblock_tile_simd128<1, 3>,
       i7_superblock_tile_simd128<1, 4>},
      {i7_superblock_tile_simd128<2, 1>, i7_superblock_tile_simd128<2, 2>, i7_superblock_tile_simd128<2, 3>,
       i7_superblock_tile_simd128<2, 4>},
  };
  return table[nr - 1][nt - 1];
}

// An R x T tile of u8 super-blocks in SIMD128: per group the unit dots (bytes widened unsigned,
// i16 products and pairwise sums) plus the activations' offsets, times the signed sub-block scales,
// the two groups added, then tile_step_pair's float step and the horizontal sum, in that order.
template <int R, int T>
void u8_superblock_tile_simd128(int64_t nb, const v128_t* w, const v128_t* a, float* y, int64_t y_stride) {
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i, w += kU8SuperWeightStride * R, a += kU8SuperActStride * T) {
    v128_t sum[R][T];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) sum[r][t] = wasm_i32x4_splat(0);
    for (int g = 0; g < 2; ++g) {
      v128_t units[R][T];
      i7_group_units<R, T, true>(w + g * kI7GroupVecs * R, a + g * kI7GroupVecs * T, units);
      for (int r = 0; r < R; ++r) {
        for (int t = 0; t < T; ++t) {
          const v128_t dot = wasm_i32x4_add(units[r][t], a[(kI7SuperVecs + 1 + g) * T + t]);
          sum[r][t] = wasm_i32x4_add(sum[r][t], wasm_i32x4_mul(dot, w[(kI7SuperVecs + g) * R + r]));
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t)
        f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum[r][t]),
                                                         wasm_f32x4_mul(w[(kI7SuperVecs + 2) * R + r], a[kI7SuperVecs * T + t])));
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum_f32(f[r][t]);
}

I7TileSimd128 edge_u8_superblock_tile(int64_t nr, int64_t nt) {
  static constexpr I7TileSimd128 table[kTileRows][kTileTokens] = {
      {u8_superblock_tile_simd128<1, 1>, u8_superblock_tile_simd128<1, 2>, u8_superblock_tile_simd128<1, 3>,
       u8_superblock_tile_simd128<1, 4>},
      {u8_superblock_tile_simd128<2, 1>, u8_superblock_tile_simd128<2, 2>, u8_superblock_tile_simd128<2, 3>,
       u8_superblock_tile_simd128<2, 4>},
  };
  return table[nr - 1][nt - 1];
}

// Whole 2 x 4 tiles through `slot`, the edges through edge(nr, nt); w_row / a_row: vectors a packed row.
template <typename Slot, typename Edge>
void tiles(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n, int64_t w_row, int64_t a_row,
           float* y, int64_t y_stride, Slot slot, Edge edge) {
  for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
    const int64_t nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTileTokens) {
      const int64_t nt = n_tokens - t0 < kTileTokens ? n_tokens - t0 : kTileTokens;
      float* yt = y + t0 * y_stride + r0;
      if (nr == kTileRows && nt == kTileTokens) {
        slot(static_cast<int32_t>(n), w + r0 * w_row, a + t0 * a_row, yt, static_cast<int32_t>(y_stride));
      } else {
        edge(nr, nt)(n, w + r0 * w_row, a + t0 * a_row, yt, y_stride);
      }
    }
  }
}

}  // namespace

void i7_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_groups, float* y,
                int64_t y_stride) {
  tiles(w, n_rows, a, n_tokens, n_groups, n_groups * kI7WeightStride, n_groups * kI7ActStride, y, y_stride, i7_tile,
        edge_tile);
}

void u8_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_groups, float* y,
                int64_t y_stride) {
  tiles(w, n_rows, a, n_tokens, n_groups, n_groups * kI7WeightStride, n_groups * kI7ActStride, y, y_stride, u8_tile,
        edge_tile);
}

void u8_superblock_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t nb, float* y,
                           int64_t y_stride) {
  tiles(w, n_rows, a, n_tokens, nb, nb * kU8SuperWeightStride, nb * kU8SuperActStride, y, y_stride,
        u8_superblock_tile, edge_u8_superblock_tile);
}

void i7_superblock_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t nb, float* y,
                           int64_t y_stride) {
  tiles(w, n_rows, a, n_tokens, nb, nb * kI7SuperWeightStride, nb * kI7SuperActStride, y, y_stride,
        i7_superblock_tile, edge_superblock_tile);
}

}  // namespace ox::kernels::simd128::gemm

// The SIMD128 body of the i7_tile slot (relaxed_slots.h); the splice finds it by its plain name.
extern "C" __attribute__((noinline)) void ox_simd128_i7_tile(int32_t n_groups, const v128_t* w, const v128_t* a,
                                                             float* y, int32_t y_stride) {
  ox::kernels::simd128::gemm::i7_tile_simd128<2, 4>(n_groups, w, a, y, y_stride);
}

// The SIMD128 body of the u8_tile slot: i7_tile's integers by other instructions (kMulAdd).
extern "C" __attribute__((noinline)) void ox_simd128_u8_tile(int32_t n_groups, const v128_t* w, const v128_t* a,
                                                             float* y, int32_t y_stride) {
  ox::kernels::simd128::gemm::i7_tile_simd128<2, 4, true>(n_groups, w, a, y, y_stride);
}

extern "C" __attribute__((noinline)) void ox_simd128_u8_superblock_tile(int32_t nb, const v128_t* w, const v128_t* a,
                                                                        float* y, int32_t y_stride) {
  ox::kernels::simd128::gemm::u8_superblock_tile_simd128<2, 4>(nb, w, a, y, y_stride);
}

extern "C" __attribute__((noinline)) void ox_simd128_i7_superblock_tile(int32_t nb, const v128_t* w, const v128_t* a,
                                                                        float* y, int32_t y_stride) {
  ox::kernels::simd128::gemm::i7_superblock_tile_simd128<2, 4>(nb, w, a, y, y_stride);
}

namespace ox::kernels::simd128 {
// Not const: a pointer the optimizers cannot see through, so the slot stays a function of its own.
I7TileFn i7_tile = ox_simd128_i7_tile;
I7TileFn u8_tile = ox_simd128_u8_tile;
I7TileFn i7_superblock_tile = ox_simd128_i7_superblock_tile;
I7TileFn u8_superblock_tile = ox_simd128_u8_superblock_tile;
}  // namespace ox::kernels::simd128
