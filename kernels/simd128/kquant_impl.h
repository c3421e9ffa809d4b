// Row dot products of the K-quants and IQ4_XS against Q8_K, written over an activation source
// `act(i, c)` (16-element chunk c of super-block i as even / odd i16) so that vec_dot (which
// splits as it reads) and the gemm per-row path (activations split once per call) share them.
// Reference: quant_traits(W).vec_dot_ref; integer parts exact, float order differs.
#pragma once

#include <cstddef>

#include "core/quant/blocks.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128::kquant {

// Chunk c of super-block i split on the fly (vec_dot).
struct SplitOnTheFly {
  const BlockQ8_K* y;
  EvenOdd operator()(int64_t i, int c) const { return split_s8(load(y[i].qs + 16 * c)); }
};

// Chunk c of super-block i read from gemm::split_acts_q8_k.
struct PreSplit {
  const v128_t* p;
  EvenOdd operator()(int64_t i, int c) const { return {p[32 * i + 2 * c], p[32 * i + 2 * c + 1]}; }
};

// 16 packed bytes in i16-lane form: lane k's low nibbles are elements 2k / 2k+1 of the
// low-nibble run, its high nibbles elements 2k / 2k+1 of the high-nibble run.
struct Nibbles {
  EvenOdd lo;
  EvenOdd hi;
};
// The vector constants of the Q4_K and Q6_K rows. The gemm decode path takes them from
// opaque_consts() (linear memory, see Fp16Consts in util.h) so that V8 does not rebuild them
// in every inner iteration; vec_dot uses inline_consts().
struct Consts {
  v128_t nibble16;  // i16 0x000F
  v128_t nibble8;   // i8 0x0F
  v128_t top2;      // i8 0x30: Q6_K's top two bits in place
  v128_t low_byte;  // i16 0x00FF
  v128_t low6;      // i8 0x3F: Q4_K's 6-bit scales
};
inline Consts inline_consts() {
  return {wasm_i16x8_splat(0x0F), wasm_i8x16_splat(0x0F), wasm_i8x16_splat(0x30), wasm_i16x8_splat(0x00FF),
          wasm_i8x16_splat(0x3F)};
}
Consts opaque_consts();  // inline_consts(), read from memory (gemm_tile.cpp)

inline Nibbles nibbles(v128_t q, const v128_t m = wasm_i16x8_splat(0x0F)) {
  return {{wasm_v128_and(q, m), wasm_v128_and(wasm_u16x8_shr(q, 8), m)},
          {wasm_v128_and(wasm_u16x8_shr(q, 4), m), wasm_u16x8_shr(q, 12)}};
}

// The 16 signed bytes of v as 16 int32 at out.
inline void store_i32(int32_t* out, v128_t v) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(v), hi = wasm_i16x8_extend_high_i8x16(v);
  wasm_v128_store(out, wasm_i32x4_extend_low_i16x8(lo));
  wasm_v128_store(out + 4, wasm_i32x4_extend_high_i16x8(lo));
  wasm_v128_store(out + 8, wasm_i32x4_extend_low_i16x8(hi));
  wasm_v128_store(out + 12, wasm_i32x4_extend_high_i16x8(hi));
}

// sum_j m_j * (bsums[2j] + bsums[2j+1]) as i32x4 partial sums, from the eight mins each doubled
// (dup: bytes m0 m0 m1 m1 ... m7 m7) and the two halves of bsums.
inline v128_t min_dot_dup(v128_t dup, v128_t bsums_lo, v128_t bsums_hi) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(bsums_lo, wasm_u16x8_extend_low_u8x16(dup)),
                        wasm_i32x4_dot_i16x8(bsums_hi, wasm_u16x8_extend_high_u8x16(dup)));
}
// The same from the mins as bytes of a u64.
inline v128_t min_dot(uint64_t mins, const int16_t* bsums) {
  const v128_t m8 = wasm_i64x2_make(static_cast<int64_t>(mins), 0);
  return min_dot_dup(wasm_i8x16_shuffle(m8, m8, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), load(bsums),
                     load(bsums + 8));
}

// sum_k v_k * bsums_k over the 16 sub-blocks, v given as 16 signed bytes.
inline v128_t bsum_dot_s8(v128_t v, const int16_t* bsums) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(load(bsums), wasm_i16x8_extend_low_i8x16(v)),
                        wasm_i32x4_dot_i16x8(load(bsums + 8), wasm_i16x8_extend_high_i8x16(v)));
}

// Q4_K's packed 6-bit scales and mins (see unpack_k4_scales), the scales widened to i16.
struct K4ScalesI16 {
  v128_t scales;  // i16 lane j = scale of sub-block j
  uint64_t mins;  // byte j = min of sub-block j
};
inline K4ScalesI16 unpack_k4_scales_i16(const uint8_t* p) {
  const KScales k = unpack_k4_scales(p);
  uint64_t scales;
  std::memcpy(&scales, k.scales, 8);
  return {wasm_u16x8_extend_low_u8x16(wasm_i64x2_make(static_cast<int64_t>(scales), 0)), k.mins};
}

// The 16 products of a lane-form sub-block against its activations, pairs summed in i16 (each
// |q * a| <= 63 * 128).
inline v128_t products16(EvenOdd w, EvenOdd a) {
  return wasm_i16x8_add(wasm_i16x8_mul(w.even, a.even), wasm_i16x8_mul(w.odd, a.odd));
}

// The 32 products of a Q4_K / Q5_K sub-block (two lane-form halves, t = 0, 1) against their
// activations, summed in i16 (four per lane, each |q * a| <= 31 * 128).
inline v128_t q4_k_products(EvenOdd w0, EvenOdd a0, EvenOdd w1, EvenOdd a1) {
  return wasm_i16x8_add(products16(w0, a0), products16(w1, a1));
}

// One Q4_K / Q5_K super-block's scaled sum. `weights(c, t, q)` turns the 16 qs bytes of chunk
// c, half t into lane-form weights (Q4_K: the nibbles; Q5_K: nibbles plus 5th bits, at most 31,
// so four products still fit i16); `act(c)` gives activation chunk c (elements 16c..16c+15);
// scales[j] is sub-block j's scale.
template <typename Act, typename Weights>
inline v128_t superblock_dot(const uint8_t* qs, Act act, const int16_t scales[8], Weights weights) {
  v128_t sumi = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)  // unrolled, V8 spills the hoisted loads (see scaled_planes)
  for (int c = 0; c < 4; ++c) {  // chunk c: sub-blocks 2c (low nibbles) and 2c+1 (high nibbles)
    const Nibbles w0 = weights(c, 0, load(qs + 32 * c)), w1 = weights(c, 1, load(qs + 32 * c + 16));
    const v128_t lo = q4_k_products(w0.lo, act(4 * c), w1.lo, act(4 * c + 1));
    const v128_t hi = q4_k_products(w0.hi, act(4 * c + 2), w1.hi, act(4 * c + 3));
    sumi = wasm_i32x4_add(sumi, wasm_i32x4_add(wasm_i32x4_dot_i16x8(lo, wasm_v128_load16_splat(scales + 2 * c)),
                                               wasm_i32x4_dot_i16x8(hi, wasm_v128_load16_splat(scales + 2 * c + 1))));
  }
  return sumi;
}

template <typename Act>
inline float row_q4_k(int64_t nb, const BlockQ4_K* x, const BlockQ8_K* y, Act act,
                      const Consts& consts = inline_consts()) {
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const K4ScalesI16 k = unpack_k4_scales_i16(x[i].scales);
    int16_t scales[8];
    wasm_v128_store(scales, k.scales);
    const v128_t sumi = superblock_dot(x[i].qs, [&](int c) { return act(i, c); }, scales,
                                       [&](int, int, v128_t q) { return nibbles(q, consts.nibble16); });
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, min_dot(k.mins, y[i].bsums), y[i].d * fp16(x[i].dmin));
  }
  return hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

// The scales and mins of two Q4_K super-blocks unpacked together in vector lanes (the scalar
// unpack_k4_scales, twice, costs about as much as a chunk of both rows). Per block the 12 bytes
// a0 | a1 | a2 hold scales 0-3 = a0 & 63, mins 0-3 = a1 & 63, scales 4-7 = (a2 & 15) | (a0 >> 6)
// << 4 and mins 4-7 = (a2 >> 4) | (a1 >> 6) << 4, bytewise.
struct K4Scales2 {
  v128_t scales;  // i8: row 0's eight scales, then row 1's
  v128_t mins;    // i8: row 0's eight mins, then row 1's
};
inline K4Scales2 unpack_k4_scales2(const uint8_t* s0, const uint8_t* s1, const Consts& consts) {
  // [a0, a1, a0', a1'] and [a2, a2, a2', a2'] (the qs bytes read past a2 are not used)
  const v128_t v0 = load(s0), v1 = load(s1);
  const v128_t a01 = wasm_i32x4_shuffle(v0, v1, 0, 1, 4, 5), a2 = wasm_i32x4_shuffle(v0, v1, 2, 2, 6, 6);
  const v128_t low = wasm_v128_and(a01, consts.low6);  // [scales 0-3, mins 0-3] of each row
  // bits 6-7 of each byte of a0 / a1 to bits 4-5 (a 32-bit shift; the bits it brings in from the
  // next byte are masked off)
  const v128_t top = wasm_v128_and(wasm_u32x4_shr(a01, 2), consts.top2);
  const v128_t nib = wasm_i32x4_shuffle(wasm_v128_and(a2, consts.nibble8), wasm_v128_and(wasm_u32x4_shr(a2, 4), consts.nibble8),
                                        0, 5, 2, 7);
  const v128_t high = wasm_v128_or(nib, top);  // [scales 4-7, mins 4-7] of each row
  return {wasm_i32x4_shuffle(low, high, 0, 4, 2, 6), wasm_i32x4_shuffle(low, high, 1, 5, 3, 7)};
}

// sum_j m_j * (bsums[2j] + bsums[2j+1]) for the two rows' mins (bytes 0-7 and 8-15 of mins).
inline void min_dot2(v128_t mins, const int16_t* bsums, v128_t* row0, v128_t* row1) {
  const v128_t b0 = load(bsums), b1 = load(bsums + 8);
  *row0 = min_dot_dup(wasm_i8x16_shuffle(mins, mins, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), b0, b1);
  *row1 = min_dot_dup(wasm_i8x16_shuffle(mins, mins, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15), b0, b1);
}

// Two Q4_K (or Q5_K) rows against the same activations (the gemm decode path): each activation
// vector is loaded once for both rows, and the rows' four fp16 scales (d, dmin of each) convert in
// one vector op. A sub-block's products add up in i16 and meet its scale in one i32x4.dot_i16x8_s
// against the splat scale (a lane pair stays below 2 * 15872 * 63), which costs less than an i32
// dot per product pair and an i32 multiply per sub-block. `weights(b, c, t, q)` turns the 16 qs
// bytes q of chunk c, half t of block b into lane form (as superblock_dot's). The loop over chunks
// stays rolled for the reason superblock_dot gives.
template <typename Block, typename Weights>
inline void rows2_k4(int64_t nb, const Block* x0, const Block* x1, const BlockQ8_K* y, const v128_t* act,
                     const Consts& consts, const Fp16Consts& half, float* out0, float* out1, Weights weights) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const K4Scales2 k = unpack_k4_scales2(x0[i].scales, x1[i].scales, consts);
    // Row 0's then row 1's scales as i16, so that each splat below is a single load.
    int16_t scales[16];
    wasm_v128_store(scales, wasm_u16x8_extend_low_u8x16(k.scales));
    wasm_v128_store(scales + 8, wasm_u16x8_extend_high_u8x16(k.scales));
    static_assert(offsetof(Block, dmin) == 2, "d and dmin read as one u32");
    uint32_t dm0, dm1;  // d in the low half, dmin in the high half
    std::memcpy(&dm0, &x0[i].d, 4);
    std::memcpy(&dm1, &x1[i].d, 4);
    // [d0, dmin0, d1, dmin1] * y.d
    const v128_t dm = wasm_f32x4_mul(
        fp16x4_to_f32(wasm_u32x4_extend_low_u16x8(wasm_i32x4_make(static_cast<int32_t>(dm0), static_cast<int32_t>(dm1), 0, 0)), half),
        wasm_f32x4_splat(y[i].d));
    v128_t sum0 = wasm_i32x4_splat(0), sum1 = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
    for (int c = 0; c < 4; ++c) {  // chunk c: sub-blocks 2c (low nibbles) and 2c+1 (high nibbles)
      const v128_t* act_c = act + 32 * i + 8 * c;  // chunks 4c..4c+3, as even / odd pairs
      const EvenOdd a_lo0 = {act_c[0], act_c[1]}, a_lo1 = {act_c[2], act_c[3]};
      const EvenOdd a_hi0 = {act_c[4], act_c[5]}, a_hi1 = {act_c[6], act_c[7]};
      const uint8_t* q0 = x0[i].qs + 32 * c;
      const Nibbles w00 = weights(x0[i], c, 0, load(q0)), w01 = weights(x0[i], c, 1, load(q0 + 16));
      sum0 = wasm_i32x4_add(sum0, wasm_i32x4_add(
          wasm_i32x4_dot_i16x8(q4_k_products(w00.lo, a_lo0, w01.lo, a_lo1), wasm_v128_load16_splat(scales + 2 * c)),
          wasm_i32x4_dot_i16x8(q4_k_products(w00.hi, a_hi0, w01.hi, a_hi1), wasm_v128_load16_splat(scales + 2 * c + 1))));
      const uint8_t* q1 = x1[i].qs + 32 * c;
      const Nibbles w10 = weights(x1[i], c, 0, load(q1)), w11 = weights(x1[i], c, 1, load(q1 + 16));
      sum1 = wasm_i32x4_add(sum1, wasm_i32x4_add(
          wasm_i32x4_dot_i16x8(q4_k_products(w10.lo, a_lo0, w11.lo, a_lo1), wasm_v128_load16_splat(scales + 8 + 2 * c)),
          wasm_i32x4_dot_i16x8(q4_k_products(w10.hi, a_hi0, w11.hi, a_hi1), wasm_v128_load16_splat(scales + 9 + 2 * c))));
    }
    // [row 0 sum, row 0 min term, row 1 sum, row 1 min term] as exact integers, then one
    // multiply by [d0, dmin0, d1, dmin1] * y.d.
    v128_t min0, min1;
    min_dot2(k.mins, y[i].bsums, &min0, &min1);
    const v128_t tot = hsum4x4_i32(sum0, min0, sum1, min1);
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), dm));
  }
  *out0 = wasm_f32x4_extract_lane(acc, 0) - wasm_f32x4_extract_lane(acc, 1);
  *out1 = wasm_f32x4_extract_lane(acc, 2) - wasm_f32x4_extract_lane(acc, 3);
}

inline void rows2_q4_k(int64_t nb, const BlockQ4_K* x0, const BlockQ4_K* x1, const BlockQ8_K* y, const v128_t* act,
                       const Consts& consts, const Fp16Consts& half, float* out0, float* out1) {
  const v128_t m = consts.nibble16;
  rows2_k4(nb, x0, x1, y, act, consts, half, out0, out1, [m](const BlockQ4_K&, int, int, v128_t q) { return nibbles(q, m); });
}

// Q5_K's lane-form weights: the nibbles of chunk c, half t, plus the 5th bits from qh[16t..16t+15]
// (bit 2c of byte l for the low nibble of qs byte l, bit 2c + 1 for the high one; see row_q5_k).
inline Nibbles q5_k_weights(const BlockQ5_K& b, int c, int t, v128_t q, const Consts& consts) {
  Nibbles w = nibbles(q, consts.nibble16);
  const EvenOdd qh = split_u8(load(b.qh + 16 * t));
  const v128_t bit4 = wasm_i16x8_splat(0x10);
  const v128_t e = wasm_u16x8_shr(qh.even, 2 * c), o = wasm_u16x8_shr(qh.odd, 2 * c);
  w.lo.even = wasm_v128_or(w.lo.even, wasm_v128_and(wasm_i16x8_shl(e, 4), bit4));
  w.lo.odd = wasm_v128_or(w.lo.odd, wasm_v128_and(wasm_i16x8_shl(o, 4), bit4));
  w.hi.even = wasm_v128_or(w.hi.even, wasm_v128_and(wasm_i16x8_shl(e, 3), bit4));
  w.hi.odd = wasm_v128_or(w.hi.odd, wasm_v128_and(wasm_i16x8_shl(o, 3), bit4));
  return w;
}

// Two Q5_K rows (quants 0..31: four products per i16 lane stay below 4 * 31 * 128).
inline void rows2_q5_k(int64_t nb, const BlockQ5_K* x0, const BlockQ5_K* x1, const BlockQ8_K* y, const v128_t* act,
                       const Consts& consts, const Fp16Consts& half, float* out0, float* out1) {
  rows2_k4(nb, x0, x1, y, act, consts, half, out0, out1,
           [&consts](const BlockQ5_K& b, int c, int t, v128_t q) { return q5_k_weights(b, c, t, q, consts); });
}

template <typename Act>
inline float row_q5_k(int64_t nb, const BlockQ5_K* x, const BlockQ8_K* y, Act act) {
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const K4ScalesI16 k = unpack_k4_scales_i16(x[i].scales);
    int16_t scales[8];
    wasm_v128_store(scales, k.scales);
    // qh byte l: bit 2c = 5th bit of element 64c + l, bit 2c+1 of element 64c + 32 + l. In
    // lane form (even / odd bytes zero-extended to i16) each chunk reads bits 2c and 2c+1.
    // (Building the quants on whole bytes and splitting afterwards measured slower under V8.)
    EvenOdd qh[2];
    for (int t = 0; t < 2; ++t) qh[t] = split_u8(load(x[i].qh + 16 * t));
    const v128_t bit4 = wasm_i16x8_splat(0x10);
    auto high = [&](int c, int t, v128_t q) {
      Nibbles w = nibbles(q);
      const v128_t e = wasm_u16x8_shr(qh[t].even, 2 * c), o = wasm_u16x8_shr(qh[t].odd, 2 * c);
      w.lo.even = wasm_v128_or(w.lo.even, wasm_v128_and(wasm_i16x8_shl(e, 4), bit4));
      w.lo.odd = wasm_v128_or(w.lo.odd, wasm_v128_and(wasm_i16x8_shl(o, 4), bit4));
      w.hi.even = wasm_v128_or(w.hi.even, wasm_v128_and(wasm_i16x8_shl(e, 3), bit4));
      w.hi.odd = wasm_v128_or(w.hi.odd, wasm_v128_and(wasm_i16x8_shl(o, 3), bit4));
      return w;
    };
    const v128_t sumi = superblock_dot(x[i].qs, [&](int c) { return act(i, c); }, scales, high);
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, min_dot(k.mins, y[i].bsums), y[i].d * fp16(x[i].dmin));
  }
  return hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

// Q6_K quants of half h, bytes l = 16t..16t+15, plane j, in lane form (0..63). ql[64h + l] low /
// high nibble = elements +0 / +64, ql[64h + 32 + l] = +32 / +96; qh[32h + l] bits 0-1, 2-3, 4-5,
// 6-7 = their top bits: plane j takes nibble j / 2 of ql[64h + 32(j & 1) + l] and bits 2j, 2j+1
// of qh (moved to bits 4-5 of each byte; 16-bit shifts, right first so no bit of the high byte
// is lost).
inline EvenOdd q6_k_plane(const BlockQ6_K& b, int h, int t, int j, const Consts& consts) {
  const v128_t l = load(b.ql + 64 * h + 32 * (j & 1) + 16 * t), qh = load(b.qh + 32 * h + 16 * t);
  const v128_t q = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(l, 4 * (j >> 1)), consts.nibble8),
                                wasm_v128_and(wasm_i16x8_shl(wasm_u16x8_shr(qh, 2 * j), 4), consts.top2));
  return EvenOdd{wasm_v128_and(q, consts.low_byte), wasm_u16x8_shr(q, 8)};
}

template <typename Act>
inline float row_q6_k(int64_t nb, const BlockQ6_K* x, const BlockQ8_K* y, Act act,
                      const Consts& consts = inline_consts()) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const v128_t sc8 = load(x[i].scales);
    // q - 32 with q in 0..63: start from -32 * sum_k sc_k * bsums_k.
    const v128_t bias = bsum_dot_s8(sc8, y[i].bsums);
    auto plane = [&](int h, int t, int j) { return q6_k_plane(x[i], h, t, j, consts); };
    int8_t scales[16];
    wasm_v128_store(scales, sc8);
    const v128_t sumi = scaled_planes([&](int c) { return act(i, c); }, scales, plane);
    acc = mul_add(acc, wasm_i32x4_sub(sumi, wasm_i32x4_shl(bias, 5)), y[i].d * fp16(x[i].d));
  }
  return hsum_f32(acc);
}

// Two Q6_K rows against the same activations, as rows2_q4_k: each activation chunk loaded once
// for both rows, the two fp16 d converted together, a sub-block's products summed in i16 and
// scaled in one i32x4.dot_i16x8_s (a lane pair stays below 2 * 16128 * 128).
inline void rows2_q6_k(int64_t nb, const BlockQ6_K* x0, const BlockQ6_K* x1, const BlockQ8_K* y, const v128_t* act,
                       const Consts& consts, const Fp16Consts& half, float* out0, float* out1) {
  v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const v128_t sc0 = load(x0[i].scales), sc1 = load(x1[i].scales);
    // q - 32 with q in 0..63: start from -32 * sum_k sc_k * bsums_k.
    const v128_t bias0 = wasm_i32x4_shl(bsum_dot_s8(sc0, y[i].bsums), 5);
    const v128_t bias1 = wasm_i32x4_shl(bsum_dot_s8(sc1, y[i].bsums), 5);
    // The scales widened to i16 once, so that each is one splatting load below.
    int16_t scales[32];
    wasm_v128_store(scales, wasm_i16x8_extend_low_i8x16(sc0));
    wasm_v128_store(scales + 8, wasm_i16x8_extend_high_i8x16(sc0));
    wasm_v128_store(scales + 16, wasm_i16x8_extend_low_i8x16(sc1));
    wasm_v128_store(scales + 24, wasm_i16x8_extend_high_i8x16(sc1));
    const v128_t d = wasm_f32x4_mul(
        fp16x4_to_f32(wasm_i32x4_make(x0[i].d, x1[i].d, 0, 0), half), wasm_f32x4_splat(y[i].d));
    v128_t dot0 = wasm_i32x4_splat(0), dot1 = dot0;
#pragma clang loop unroll(disable)
    for (int ht = 0; ht < 4; ++ht) {
      const int h = ht >> 1, t = ht & 1;
      // Sub-block k's activations at act_ht[4j], act_ht[4j + 1]: constant offsets from one pointer per
      // (h, t), which V8 folds into the loads (computed per load, they cost four instructions).
      const v128_t* act_ht = act + 32 * i + 16 * h + 2 * t;
      for (int j = 0; j < 4; ++j) {
        const int k = 8 * h + 2 * j + t;
        const EvenOdd a = {act_ht[4 * j], act_ht[4 * j + 1]};
        dot0 = wasm_i32x4_add(dot0, wasm_i32x4_dot_i16x8(products16(q6_k_plane(x0[i], h, t, j, consts), a), wasm_v128_load16_splat(scales + k)));
        dot1 = wasm_i32x4_add(dot1, wasm_i32x4_dot_i16x8(products16(q6_k_plane(x1[i], h, t, j, consts), a), wasm_v128_load16_splat(scales + 16 + k)));
      }
    }
    const v128_t sum0 = wasm_i32x4_sub(dot0, bias0), sum1 = wasm_i32x4_sub(dot1, bias1);
    acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum0), wasm_i32x4_shuffle(d, d, 0, 0, 0, 0)));
    acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum1), wasm_i32x4_shuffle(d, d, 1, 1, 1, 1)));
  }
  *out0 = hsum_f32(acc0);
  *out1 = hsum_f32(acc1);
}

inline EvenOdd shr_and(EvenOdd v, int shift, int16_t mask) {
  const v128_t m = wasm_i16x8_splat(mask);
  return {wasm_v128_and(wasm_u16x8_shr(v.even, shift), m), wasm_v128_and(wasm_u16x8_shr(v.odd, shift), m)};
}

// Q2_K / Q3_K: byte l of 32-byte half h holds elements 128h + 32j + l at bits 2j..2j+1.
template <typename Act>
inline float row_q2_k(int64_t nb, const BlockQ2_K* x, const BlockQ8_K* y, Act act) {
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    // scales[k]: low nibble = scale of sub-block k, high nibble = its min.
    const v128_t packed = load(x[i].scales);
    int8_t scales[16];
    wasm_v128_store(scales, wasm_v128_and(packed, wasm_i8x16_splat(0x0F)));
    const v128_t mins = wasm_v128_and(wasm_u16x8_shr(packed, 4), wasm_i8x16_splat(0x0F));
    const v128_t sumi = scaled_planes([&](int c) { return act(i, c); }, scales, [&](int h, int t, int j) {
      return shr_and(split_u8(load(x[i].qs + 32 * h + 16 * t)), 2 * j, 3);
    });
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, bsum_dot_s8(mins, y[i].bsums), y[i].d * fp16(x[i].dmin));
  }
  return hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

template <typename Act>
inline float row_q3_k(int64_t nb, const BlockQ3_K* x, const BlockQ8_K* y, Act act) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    const v128_t sc8 = q3_k_scales(x[i].scales);  // -32..31
    int8_t scales[16];
    wasm_v128_store(scales, sc8);  // read back one byte at a time: forwarding works
    // q = u - 4 with u = low2 + 4 * hbit: start from -4 * sum_k sc_k * bsums_k.
    const v128_t bias = bsum_dot_s8(sc8, y[i].bsums);
    const v128_t hm[2] = {load(x[i].hmask), load(x[i].hmask + 16)};
    const v128_t m3 = wasm_i8x16_splat(3), m4 = wasm_i8x16_splat(4);
    // u = low2 | hbit << 2 built on whole bytes (hmask bit 4h + j of byte l is the high bit of
    // element 128h + 32j + l, moved to bit 2 by 16-bit shifts and a byte mask), then split.
    auto plane = [&](int h, int t, int j) {
      const v128_t q = load(x[i].qs + 32 * h + 16 * t);
      // bit 4h + j of each byte to bit 2 (right first: see row_q6_k)
      const v128_t hb = wasm_i16x8_shl(wasm_u16x8_shr(hm[t], 4 * h + j), 2);
      const v128_t u = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(q, 2 * j), m3), wasm_v128_and(hb, m4));
      return split_u8(u);
    };
    const v128_t sumi = wasm_i32x4_sub(scaled_planes([&](int c) { return act(i, c); }, scales, plane),
                                       wasm_i32x4_shl(bias, 2));
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
  }
  return hsum_f32(acc);
}

template <typename Act>
inline float row_iq4_xs(int64_t nb, const BlockIQ4_XS* x, const BlockQ8_K* y, Act act) {
  const v128_t table = load(kIQ4NLValues);
  const v128_t m4 = wasm_i8x16_splat(0x0F);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    v128_t sumi = wasm_i32x4_splat(0);
    for (int ib = 0; ib < 8; ++ib) {  // sub-block of 32: low nibbles elements 0..15, high 16..31
      const v128_t q = load(x[i].qs + 16 * ib);
      const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, m4));
      const v128_t hi = wasm_i8x16_swizzle(table, wasm_v128_and(wasm_u16x8_shr(q, 4), m4));
      const v128_t d = wasm_i32x4_add(dot16(split_s8(lo), act(i, 2 * ib)), dot16(split_s8(hi), act(i, 2 * ib + 1)));
      const int ls = iq4_xs_scale(x[i].scales_l, x[i].scales_h, ib) - 32;
      sumi = wasm_i32x4_add(sumi, wasm_i32x4_mul(d, wasm_i32x4_splat(ls)));
    }
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
  }
  return hsum_f32(acc);
}

// Two IQ4_XS rows against the same activations (the gemm decode path; the SIMD128 body of the
// iq4_xs_pairs slot): each activation chunk loaded once for both rows, and per super-block each
// row's exact integer sum (sub-block dots times ls - 32, |sum| < 2^28) meets one float step,
// acc[r] += float(sum_r) * (d_r * y.d) in lane r, the steps iq4_xs_pairs.wat repeats.
inline void rows2_iq4_xs(int64_t nb, const BlockIQ4_XS* x0, const BlockIQ4_XS* x1, const BlockQ8_K* y,
                         const v128_t* act, const Consts& consts, const Fp16Consts& half, float* out0, float* out1) {
  const v128_t table = load(kIQ4NLValues);
  const v128_t zero = wasm_i32x4_splat(0);
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    v128_t sum0 = zero, sum1 = zero;
#pragma clang loop unroll(disable)
    for (int ib = 0; ib < 8; ++ib) {  // sub-block of 32: low nibbles elements 0..15, high 16..31
      const v128_t* act_c = act + 32 * i + 4 * ib;
      const EvenOdd a_lo = {act_c[0], act_c[1]}, a_hi = {act_c[2], act_c[3]};
      auto sub_block = [&](const BlockIQ4_XS& b) {
        const v128_t q = load(b.qs + 16 * ib);
        const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, consts.nibble8));
        const v128_t hi = wasm_i8x16_swizzle(table, wasm_v128_and(wasm_u16x8_shr(q, 4), consts.nibble8));
        const v128_t d = wasm_i32x4_add(dot16(split_s8(lo), a_lo), dot16(split_s8(hi), a_hi));
        return wasm_i32x4_mul(d, wasm_i32x4_splat(iq4_xs_scale(b.scales_l, b.scales_h, ib) - 32));
      };
      sum0 = wasm_i32x4_add(sum0, sub_block(x0[i]));
      sum1 = wasm_i32x4_add(sum1, sub_block(x1[i]));
    }
    const v128_t tot = hsum4x4_i32(sum0, sum1, zero, zero);
    const v128_t dx = fp16x4_to_f32(wasm_i32x4_make(x0[i].d, x1[i].d, 0, 0), half);
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), wasm_f32x4_mul(dx, wasm_f32x4_splat(y[i].d))));
  }
  *out0 = wasm_f32x4_extract_lane(acc, 0);
  *out1 = wasm_f32x4_extract_lane(acc, 1);
}

}  // namespace ox::kernels::simd128::kquant
