// The byte-group prefill of gemm_i7.h: the activation packing, the SIMD128 tile (the edges, and the
// body of the i7_tile slot in the plain module) and the tile loop.
#include "kernels/simd128/gemm_i7.h"

#include <cstddef>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/simd128/relaxed_slots.h"

namespace ox::kernels::simd128::gemm {

const v128_t* pack_acts_q8_0_i7(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int offset) {
  const int64_t n_groups = n / 32 / 4, row = n_groups * kI7ActStride;
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const uint8_t* base = a + static_cast<uint64_t>(t) * a_stride;
    const PackedRow pr = packed_row(out, row, t, n_tokens, kTileTokens);
    v128_t* o = pr.out;
    for (int64_t g = 0; g < n_groups; ++g, o += kI7ActStride * pr.step) {
      UnitBytes q[4];
      float d[4];
      int32_t neg[4];
      for (int j = 0; j < 4; ++j) {
        const uint8_t* b = base + (4 * g + j) * sizeof(BlockQ8_0);
        q[j] = {load(b + offsetof(BlockQ8_0, qs)), load(b + offsetof(BlockQ8_0, qs) + 16)};
        uint16_t h;
        std::memcpy(&h, b, 2);
        d[j] = fp16(h);
        const v128_t pairs = wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(q[j].lo), wasm_i16x8_extadd_pairwise_i8x16(q[j].hi));
        neg[j] = -offset * hsum_i32(wasm_i32x4_extadd_pairwise_i16x8(pairs));
      }
      store_i7_group(o, pr.step, q);
      o[kI7GroupVecs * pr.step] = wasm_f32x4_make(d[0], d[1], d[2], d[3]);
      o[(kI7GroupVecs + 1) * pr.step] = wasm_i32x4_make(neg[0], neg[1], neg[2], neg[3]);
    }
  }
  return out;
}

namespace {

// An R x T tile of byte groups in SIMD128: the bytes widened to i16 (weights unsigned, activations
// signed) and multiplied by i32x4.dot_i16x8_s. The low halves' dots hold units 0, 1 (two lanes
// each), the high halves' units 2, 3; one pairwise step leaves unit j in lane j. Then the float
// step of gemm_tile.h's tile_scale and its horizontal sum, in the same order.
template <int R, int T>
void i7_tile_simd128(int64_t n_groups, const v128_t* w, const v128_t* a, float* y, int64_t y_stride) {
  v128_t f[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) f[r][t] = wasm_f32x4_splat(0.0f);
  for (int64_t g = 0; g < n_groups; ++g, w += kI7WeightStride * R, a += kI7ActStride * T) {
    v128_t lo[R][T], hi[R][T];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) lo[r][t] = hi[r][t] = wasm_i32x4_splat(0);
    const v128_t* wp = w;
    const v128_t* ap = a;
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
          lo[r][t] = wasm_i32x4_add(lo[r][t], wasm_i32x4_dot_i16x8(wl[r], al));
          hi[r][t] = wasm_i32x4_add(hi[r][t], wasm_i32x4_dot_i16x8(wh[r], ah));
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        const v128_t units = wasm_i32x4_add(wasm_i32x4_shuffle(lo[r][t], hi[r][t], 0, 2, 4, 6),
                                            wasm_i32x4_shuffle(lo[r][t], hi[r][t], 1, 3, 5, 7));
        const v128_t acc = wasm_i32x4_add(units, a[(kI7GroupVecs + 1) * T + t]);
        f[r][t] = wasm_f32x4_add(f[r][t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc),
                                                         wasm_f32x4_mul(w[kI7GroupVecs * R + r], a[kI7GroupVecs * T + t])));
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
  static_assert(kTileRows == 2 && kTileTokens == 4, "the table above and i7_tile.wat are 2 x 4");
  return table[nr - 1][nt - 1];
}

}  // namespace

void i7_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_groups, float* y,
                int64_t y_stride) {
  const int64_t w_row = n_groups * kI7WeightStride, a_row = n_groups * kI7ActStride;
  for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
    const int64_t nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTileTokens) {
      const int64_t nt = n_tokens - t0 < kTileTokens ? n_tokens - t0 : kTileTokens;
      float* yt = y + t0 * y_stride + r0;
      if (nr == kTileRows && nt == kTileTokens) {
        i7_tile(static_cast<int32_t>(n_groups), w + r0 * w_row, a + t0 * a_row, yt, static_cast<int32_t>(y_stride));
      } else {
        edge_tile(nr, nt)(n_groups, w + r0 * w_row, a + t0 * a_row, yt, y_stride);
      }
    }
  }
}

}  // namespace ox::kernels::simd128::gemm

// The SIMD128 body of the i7_tile slot (relaxed_slots.h); the splice finds it by its plain name.
extern "C" __attribute__((noinline)) void ox_simd128_i7_tile(int32_t n_groups, const v128_t* w, const v128_t* a,
                                                             float* y, int32_t y_stride) {
  ox::kernels::simd128::gemm::i7_tile_simd128<2, 4>(n_groups, w, a, y, y_stride);
}

namespace ox::kernels::simd128 {
// Not const: a pointer the optimizers cannot see through, so the slot stays a function of its own.
I7TileFn i7_tile = ox_simd128_i7_tile;
}  // namespace ox::kernels::simd128
