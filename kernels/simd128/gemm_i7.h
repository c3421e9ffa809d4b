// Prefill on bytes, for the relaxed-SIMD module: weights stored as 4-bit values (Q4_0's nibbles,
// 0..15: the i7 operand) and Q8_0 activations packed as bytes, multiplied 16 at a time by
// i16x8.relaxed_dot_i8x16_i7x16_s (the i7_tile slot, relaxed_slots.h). Same integers and the
// same float steps as the i16 groups of gemm_tile.h (tile<R, T, 0, false>), so the same bits.
#pragma once

#include <wasm_simd128.h>

#include <cstdint>

#include "core/quant/blocks.h"
#include "kernels/simd128/gemm_tile.h"

namespace ox::kernels::simd128::gemm {

// A byte group is four consecutive 32-element units in 8 vectors: i32 lane j of vector m holds
// elements 4m .. 4m + 3 of unit j (m < 4: elements 0..15, m >= 4: 16..31), so a 4-byte dot summed
// over the group leaves unit j's integer dot in lane j, as in the i16 groups. A weight group is
// followed by its scales (f32, lane j = unit j); an activation group by its scales and by
// -offset * (the sum of unit j's quants) as i32, the accumulators' start, which takes the stored
// weights' offset (Q4_0: 8) off. Rows are interleaved in blocks of the tile's size (packed_row).
constexpr int kI7GroupVecs = 8;
constexpr int kI7WeightStride = kI7GroupVecs + 1;
constexpr int kI7ActStride = kI7GroupVecs + 2;

// IQ4_NL's codebook (kIQ4NLValues, also IQ4_XS's) shifted up by 128 into bytes 1..241: the u8 tiles'
// weight values, where u8_dot_exact() holds (relaxed_slots.h); 128 * sum(a) comes off each unit.
inline v128_t iq4_nl_values_u8() {
  return wasm_v128_xor(wasm_v128_load(kIQ4NLValues), wasm_i8x16_splat(-128));
}

// Unit j's 32 values as bytes: elements 0..15 in lo, 16..31 in hi.
struct UnitBytes {
  v128_t lo, hi;
};

// The 4 x 4 i32 transpose: lane j of t[m] is lane m of the j-th input.
inline void transpose_i32x4(v128_t a, v128_t b, v128_t c, v128_t d, v128_t t[4]) {
  const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  const v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  t[0] = wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5);
  t[1] = wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7);
  t[2] = wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5);
  t[3] = wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7);
}

// Lane j: the sum of v[j]'s four i32 lanes (a transpose's adds, not four extract-lane sums).
inline v128_t hsums4_i32(const v128_t v[4]) {
  const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5), wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7));
  const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5), wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

// Writes the 8 vectors of a byte group from its four units, `step` apart (a 4 x 4 i32 transpose
// of each half).
inline void store_i7_group(v128_t* out, int64_t step, const UnitBytes u[4]) {
  v128_t t[4];
  transpose_i32x4(u[0].lo, u[1].lo, u[2].lo, u[3].lo, t);
  for (int m = 0; m < 4; ++m) out[m * step] = t[m];
  transpose_i32x4(u[0].hi, u[1].hi, u[2].hi, u[3].hi, t);
  for (int m = 0; m < 4; ++m) out[(4 + m) * step] = t[m];
}

// Packs one weight row of n_groups byte groups of 4-bit values stored two a byte (Q4_0's qs: low
// nibbles elements 0..15, high nibbles 16..31) at `row` (packed_row with kTileRows). qs(u): unit
// u's 16 stored bytes; scales4(u): the scales of units u..u + 3 (f32x4); values(v): the bytes the
// nibbles v stand for (Q4_0: v itself; IQ4_NL: a codebook lookup). The stored bytes are transposed
// before the nibbles are split, which writes store_i7_group's bytes with half its shuffles.
template <typename QsFn, typename ScalesFn, typename ValuesFn>
inline void pack_i7_nibble_row(PackedRow row, int64_t n_groups, QsFn qs, ScalesFn scales4, ValuesFn values) {
  v128_t* out = row.out;
  const v128_t low = wasm_i8x16_splat(0x0F);
  for (int64_t g = 0; g < n_groups; ++g, out += kI7WeightStride * row.step) {
    const int64_t u = 4 * g;
    v128_t t[4];
    transpose_i32x4(qs(u), qs(u + 1), qs(u + 2), qs(u + 3), t);
    for (int m = 0; m < 4; ++m) {
      out[m * row.step] = values(wasm_v128_and(t[m], low));
      out[(4 + m) * row.step] = values(wasm_u8x16_shr(t[m], 4));
    }
    out[kI7GroupVecs * row.step] = scales4(u);
  }
}

// Every token's Q8_0 row (n elements, n / 32 a multiple of 4; rows a_stride bytes apart) as
// activation byte groups, the weights' stored values offset by `offset` (see above).
const v128_t* pack_acts_q8_0_i7(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int offset);

// Super-blocks of 256 elements (Q4_K, Q4_K_IL) in byte groups: a super-block is two groups (units
// 0..3, 4..7) whose unit dots are multiplied by their integer sub-block scales and added before one
// float step, as tile_step_pair of gemm_tile.h does with the scales already in its i16 values. A
// weight super-block is the two groups' 16 vectors, then per group the sub-block scales as i16
// (lanes 2j and 2j + 1: unit j's scale, so i32x4.dot_i16x8_s of a group's i16 pair sums and this
// vector is each unit's scaled dot), the super-block's d (f32 splat) and per group the min terms
// (f32, lane j = unit j); an activation super-block is its 16 vectors, its d (f32 splat) and per
// group d * (the sum of unit j's quants).
constexpr int kI7SuperVecs = 2 * kI7GroupVecs;
constexpr int kI7SuperWeightStride = kI7SuperVecs + 5;
constexpr int kI7SuperActStride = kI7SuperVecs + 3;

// Every token's Q8_K row (n elements, a multiple of 256) as activation super-blocks (see above).
const v128_t* pack_acts_q8_k_i7(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens);

// Super-blocks of bytes 0..255 (IQ4_XS's codebook values + 128), for the u8_superblock_tile slot
// where u8_dot_exact() holds (relaxed_slots.h). A weight super-block is its two groups' 16 vectors,
// then per group the signed sub-block scales as i32 (lane j = unit j's), then d (f32 splat); an
// activation super-block its 16 vectors, d (f32 splat) and per group -offset * (the sum of unit j's
// quants) as i32, where each group's unit dots start. Per group the exact unit dots times their
// scales, the two groups added, then one float step: tile_step_pair's integers and steps (kExtra 0).
constexpr int kU8SuperWeightStride = kI7SuperVecs + 3;
constexpr int kU8SuperActStride = kI7SuperVecs + 3;

// Every token's Q8_K row (n elements, a multiple of 256) as u8 activation super-blocks (see above).
const v128_t* pack_acts_q8_k_u8(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int offset);

// y[t * y_stride + r] for n_rows packed weight rows and n_tokens packed activation rows of nb u8
// super-blocks: whole 2 x 4 tiles through the u8_superblock_tile slot, the edges in SIMD128.
void u8_superblock_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t nb, float* y,
                           int64_t y_stride);

// y[t * y_stride + r] for n_rows packed weight rows and n_tokens packed activation rows of nb
// super-blocks, tile by tile: whole 2 x 4 tiles through the i7_superblock_tile slot, the edges in SIMD128.
void i7_superblock_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t nb, float* y,
                           int64_t y_stride);

// y[t * y_stride + r] for n_rows packed weight rows and n_tokens packed activation rows of n_groups
// byte groups, tile by tile: whole 2 x 4 tiles through the i7_tile slot, the edges in SIMD128.
void i7_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_groups, float* y,
                int64_t y_stride);
// The same with the weights any byte 0..255, where u8_dot_exact() holds (relaxed_slots.h): whole
// tiles through the u8_tile slot. The same bits as i7_product on weights of 0..15.
void u8_product(const v128_t* w, int64_t n_rows, const v128_t* a, int64_t n_tokens, int64_t n_groups, float* y,
                int64_t y_stride);

}  // namespace ox::kernels::simd128::gemm
