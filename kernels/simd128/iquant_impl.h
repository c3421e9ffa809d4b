// The codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K:
// each format decodes one 32-element sub-block into signed int8 weights (codebook entries
// gathered with 64- / 32-bit lane loads, signs applied as byte masks) and its integer scales;
// one row loop (row below) dots them with an activation source act(i, c) as kquant_impl.h does,
// so vec_dot and the gemm per-row path share it, and the gemm packing reads the same decode.
// References: vec_dot_iq2_* (core/quant/iq2.cpp), vec_dot_iq3_* (iq3.cpp), vec_dot_iq1_* (iq1.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "kernels/simd128/kquant_impl.h"

namespace ox::kernels::simd128::iquant {

// Byte j = 0xFF where bit j of `bits` is set: an 8-bit sign field as a mask of its 8 elements.
constexpr uint64_t byte_mask(uint32_t bits) {
  uint64_t m = 0;
  for (int j = 0; j < 8; ++j) m |= ((bits >> j) & 1) ? uint64_t{0xFF} << (8 * j) : 0;
  return m;
}
// The masks of the 7-bit sign fields (IQ2_XXS, IQ2_XS, IQ3_XXS): bit 7 is the parity of the seven
// stored bits (kIQ2Signs, llama.cpp's ksigns_iq2xs), so that the count of negatives is even.
struct SignMasks7 {
  uint64_t m[128];
};
inline constexpr SignMasks7 kSignMasks7 = [] {
  SignMasks7 t{};
  for (uint32_t i = 0; i < 128; ++i) t.m[i] = byte_mask(i | (__builtin_popcount(i) % 2 == 1 ? 0x80u : 0u));
  return t;
}();

// The masks of every 8-bit sign field (IQ2_S, IQ3_S).
struct SignMasks8 {
  uint64_t m[256];
};
inline constexpr SignMasks8 kSignMasks8 = [] {
  SignMasks8 t{};
  for (uint32_t i = 0; i < 256; ++i) t.m[i] = byte_mask(i);
  return t;
}();

// Rows e0, e1 of a table of 8-byte entries as one vector (e0 in bytes 0..7).
inline v128_t gather2(const uint64_t* t, uint32_t e0, uint32_t e1) {
  return wasm_v128_load64_lane(t + e1, wasm_v128_load64_zero(t + e0), 1);
}
// Rows e0..e3 of a table of 4-byte entries.
inline v128_t gather4(const uint32_t* t, const uint32_t e[4]) {
  v128_t v = wasm_v128_load32_zero(t + e[0]);
  v = wasm_v128_load32_lane(t + e[1], v, 1);
  v = wasm_v128_load32_lane(t + e[2], v, 2);
  return wasm_v128_load32_lane(t + e[3], v, 3);
}
// v with the bytes under mask m (0xFF) negated: (v ^ m) - m.
inline v128_t negate_where(v128_t v, v128_t m) { return wasm_i8x16_sub(wasm_v128_xor(v, m), m); }

// The masks of 32 elements from their four 8-bit sign bytes at p (bit j of byte l: element
// 8l + j negative), looked up in kSignMasks8: under V8 faster than spreading each byte over its
// lanes with a shuffle and testing bits (IQ2_S 640 against 723 us, IQ3_S 883 against 901 us per
// 1024x4096 decode matmul, bench/gemm_stream.cpp --stream-mb 0).
inline void sign_masks32(const uint8_t* p, v128_t* m0, v128_t* m1) {
  *m0 = gather2(kSignMasks8.m, p[0], p[1]);
  *m1 = gather2(kSignMasks8.m, p[2], p[3]);
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// A decoded sub-block: elements 0..15 and 16..31 as signed int8 (|w| <= 62), and the integer
// scale of each half (the same for the formats with one scale per 32).
struct SubBlock {
  v128_t lo, hi;
  int s0, s1;
};

// Formats. Each gives sub_block(b, ib) of super-block b; d(b), the fp16 super-block scale; kFactor,
// the power of two the reference multiplies the row's sum by (its integer sums count eighths or
// quarters); kPer16, whether the halves of a sub-block have scales of their own; and finish(), the
// super-block's integer sum from the scaled sub-block dots (IQ1_S adds its delta term there).
struct Base {
  static constexpr bool kPer16 = false;
  template <typename Block>
  static float d(const Block& b) {
    return fp16(b.d);
  }
  template <typename Block>
  static v128_t finish(v128_t sumi, const Block&, const BlockQ8_K&) {
    return sumi;
  }
};

// IQ2_XXS / IQ3_XXS: grid values lo, hi (elements 0..15, 16..31) signed by the four 7-bit fields
// of aux (bits 0..27, one per 8 elements), the scale 2 (aux >> 28) + 1.
inline SubBlock with_aux_signs(v128_t lo, v128_t hi, uint32_t aux) {
  const uint64_t* masks = kSignMasks7.m;
  const int s = 2 * static_cast<int>(aux >> 28) + 1;
  return {negate_where(lo, gather2(masks, aux & 127, (aux >> 7) & 127)),
          negate_where(hi, gather2(masks, (aux >> 14) & 127, (aux >> 21) & 127)), s, s};
}

// 2 ls + 1 of 16-group 2 ib (low nibble) and 2 ib + 1 (high) of IQ2_XS / IQ2_S.
inline SubBlock with_nibble_scales(v128_t lo, v128_t hi, uint8_t scales) {
  return {lo, hi, 2 * (scales & 15) + 1, 2 * (scales >> 4) + 1};
}

struct IQ2XXS : Base {
  using Block = BlockIQ2_XXS;
  static constexpr float kFactor = 0.125f;
  // 4 grid bytes, then a u32: four 7-bit sign fields and ls in bits 28..31.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    return with_aux_signs(gather2(quant::kIQ2XXSGrid, q[0], q[1]), gather2(quant::kIQ2XXSGrid, q[2], q[3]),
                          load_u32(q + 4));
  }
};

struct IQ2XS : Base {
  using Block = BlockIQ2_XS;
  static constexpr float kFactor = 0.125f;
  static constexpr bool kPer16 = true;
  // One u16 per octet: 9-bit grid index, 7 sign bits above it.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint16_t* q = b.qs + 4 * ib;
    const uint64_t* masks = kSignMasks7.m;
    const v128_t lo = negate_where(gather2(quant::kIQ2XSGrid, q[0] & 511, q[1] & 511), gather2(masks, q[0] >> 9, q[1] >> 9));
    const v128_t hi = negate_where(gather2(quant::kIQ2XSGrid, q[2] & 511, q[3] & 511), gather2(masks, q[2] >> 9, q[3] >> 9));
    return with_nibble_scales(lo, hi, b.scales[ib]);
  }
};

struct IQ2S : Base {
  using Block = BlockIQ2_S;
  static constexpr float kFactor = 0.125f;
  static constexpr bool kPer16 = true;
  // Octet k = 4 ib + l: index qs[k] plus bits 2l..2l+1 of qh[ib] as bits 8..9; signs qs[32 + k].
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const uint32_t qh = b.qh[ib];
    v128_t m0, m1;
    sign_masks32(b.qs + kQK_K / 8 + 4 * ib, &m0, &m1);
    const v128_t lo = gather2(quant::kIQ2SGrid, q[0] | ((qh << 8) & 0x300), q[1] | ((qh << 6) & 0x300));
    const v128_t hi = gather2(quant::kIQ2SGrid, q[2] | ((qh << 4) & 0x300), q[3] | ((qh << 2) & 0x300));
    return with_nibble_scales(negate_where(lo, m0), negate_where(hi, m1), b.scales[ib]);
  }
};

struct IQ3XXS : Base {
  using Block = BlockIQ3_XXS;
  static constexpr float kFactor = 0.25f;
  // 8 grid bytes per sub-block; its u32 at qs[64 + 4 ib]: four 7-bit sign fields, s in bits 28..31.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint32_t e0[4] = {q[0], q[1], q[2], q[3]}, e1[4] = {q[4], q[5], q[6], q[7]};
    return with_aux_signs(gather4(quant::kIQ3XXSGrid, e0), gather4(quant::kIQ3XXSGrid, e1),
                          load_u32(b.qs + kQK_K / 4 + 4 * ib));
  }
};

struct IQ3S : Base {
  using Block = BlockIQ3_S;
  static constexpr float kFactor = 1.0f;
  // Group l's index: qs[8 ib + l] plus bit l of qh[ib] as bit 8; 8-bit sign bytes; 1 + 2 s.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint32_t qh = b.qh[ib];
    uint32_t e[8];
    for (int l = 0; l < 8; ++l) e[l] = q[l] | ((qh << (8 - l)) & 256);
    v128_t m0, m1;
    sign_masks32(b.signs + 4 * ib, &m0, &m1);
    const int s = 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 15) + 1;
    return {negate_where(gather4(quant::kIQ3SGrid, e), m0), negate_where(gather4(quant::kIQ3SGrid, e + 4), m1), s, s};
  }
};

// IQ1 codebook entries of groups 4 ib .. 4 ib + 3 (values -1, 0, 1), from their 11-bit indices.
inline void iq1_grid32(const uint32_t e[4], v128_t* lo, v128_t* hi) {
  *lo = gather2(quant::kIQ1SGrid, e[0], e[1]);
  *hi = gather2(quant::kIQ1SGrid, e[2], e[3]);
}

// 8 v bytewise (IQ1 grid values -1..1): three adds, cheaper under V8 than an i8 shift (a 16-bit
// shift and a mask).
inline v128_t times8(v128_t v) {
  const v128_t v2 = wasm_i8x16_add(v, v), v4 = wasm_i8x16_add(v2, v2);
  return wasm_i8x16_add(v4, v4);
}

// IQ1_S: isum = sum_ib (2 s + 1) (8 grid . q8 + delta sum q8). sub_block gives the grid with
// scale 2 s + 1; finish() multiplies by 8 and adds the delta terms, from the activations' bsums
// as the reference reads them.
struct IQ1S : Base {
  using Block = BlockIQ1_S;
  static constexpr float kFactor = 0.125f;
  // Group l's index: qs[4 ib + l] plus bits 3l..3l+2 of qh[ib] as bits 8..10; s in bits 12..14.
  static void indices(const Block& b, int ib, uint32_t e[4]) {
    const uint32_t qh = b.qh[ib];
    for (int l = 0; l < 4; ++l) e[l] = b.qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
  }
  static int scale(const Block& b, int ib) { return 2 * ((b.qh[ib] >> 12) & 7) + 1; }
  static SubBlock sub_block(const Block& b, int ib) {
    uint32_t e[4];
    indices(b, ib, e);
    SubBlock s;
    iq1_grid32(e, &s.lo, &s.hi);
    s.s0 = s.s1 = scale(b, ib);
    return s;
  }
  // The gemm's units (iquant.cpp): the weights 8 grid + delta (delta = +-1 for the whole sub-block,
  // qh bit 15), so that a unit's dot is 8 grid . q8 + delta sum q8 with sum q8 counted from the
  // quants, where the reference reads it from bsums (the same for every Q8_K row the quantizer makes).
  static SubBlock unit_weights(const Block& b, int ib) {
    SubBlock s = sub_block(b, ib);
    const v128_t delta = wasm_i8x16_splat((b.qh[ib] & 0x8000) ? -1 : 1);
    s.lo = wasm_i8x16_add(times8(s.lo), delta);
    s.hi = wasm_i8x16_add(times8(s.hi), delta);
    return s;
  }
  // 8 sumi + sum_ib (2 s + 1) delta_ib (bsums[2 ib] + bsums[2 ib + 1]): the eight signed factors
  // from qh in i16 lanes (bit 15 = delta's sign: negated where set), each paired with its two bsums.
  static v128_t finish(v128_t sumi, const Block& b, const BlockQ8_K& y) {
    const v128_t qh = load(b.qh);
    const v128_t c = wasm_v128_or(wasm_i16x8_shl(wasm_v128_and(wasm_u16x8_shr(qh, 12), wasm_i16x8_splat(7)), 1), wasm_i16x8_splat(1));
    const v128_t neg = wasm_i16x8_shr(qh, 15);
    const v128_t cd = wasm_i16x8_sub(wasm_v128_xor(c, neg), neg);
    const v128_t delta = wasm_i32x4_add(
        wasm_i32x4_dot_i16x8(load(y.bsums), wasm_i16x8_shuffle(cd, cd, 0, 0, 1, 1, 2, 2, 3, 3)),
        wasm_i32x4_dot_i16x8(load(y.bsums + 8), wasm_i16x8_shuffle(cd, cd, 4, 4, 5, 5, 6, 6, 7, 7)));
    return wasm_i32x4_add(wasm_i32x4_shl(sumi, 3), delta);
  }
};

// IQ1_M's weights 8 grid + delta of a group (delta = +-1, in -9..9) by a 12-bit index: the group's
// 8 low index bits, then its qh nibble (3 high index bits, bit 3 the delta's sign: set = -1).
// Built from kIQ1SGrid at start-up (iquant.cpp). One gather then gives what the reference's
// 8 grid . q8 + delta sum q8 multiplies: under V8 a third faster than building 8 grid + delta
// from the grid and a delta vector per group pair (646 against 820 us per 1024x4096 matmul).
extern uint64_t kIQ1MWeights[4096];

// IQ1_M: a 3-bit scale per 16, the fp16 d spread over the scale words.
struct IQ1M : Base {
  using Block = BlockIQ1_M;
  static constexpr float kFactor = 0.125f;
  static constexpr bool kPer16 = true;
  static uint64_t scale_bits(const Block& b) {
    uint64_t sc;
    std::memcpy(&sc, b.scales, 8);
    return sc;
  }
  // The fp16 d from the top nibbles of the four u16 scale words (nibble i = bits 4i..4i+3).
  static float d(const Block& b) {
    const uint64_t sc = scale_bits(b);
    return fp16(static_cast<uint16_t>(((sc >> 12) & 0xF) | ((sc >> 24) & 0xF0) | ((sc >> 36) & 0xF00) | ((sc >> 48) & 0xF000)));
  }
  // Group g = 4 ib + l: qs[g] and nibble g % 2 of qh[g / 2]; 16-group h's scale at bits 3 (h % 4)
  // of u16 h / 4.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const uint32_t h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
    const v128_t lo = gather2(kIQ1MWeights, q[0] | ((h0 & 15) << 8), q[1] | ((h0 >> 4) << 8));
    const v128_t hi = gather2(kIQ1MWeights, q[2] | ((h1 & 15) << 8), q[3] | ((h1 >> 4) << 8));
    const uint64_t sc = scale_bits(b) >> (16 * (ib / 2) + 6 * (ib % 2));
    return {lo, hi, 2 * static_cast<int>(sc & 7) + 1, 2 * static_cast<int>((sc >> 3) & 7) + 1};
  }
};

// The scaled integer dot of a sub-block against activation chunks a0 (elements 0..15) and a1.
// An i16 lane adds two (kPer16) or four products, |w * a| <= 62 * 128: below 2^15.
template <typename F>
inline v128_t sub_block_dot(const SubBlock& s, EvenOdd a0, EvenOdd a1) {
  const v128_t p0 = kquant::products16(split_s8(s.lo), a0), p1 = kquant::products16(split_s8(s.hi), a1);
  if constexpr (F::kPer16) {
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(p0, wasm_i16x8_splat(static_cast<int16_t>(s.s0))),
                          wasm_i32x4_dot_i16x8(p1, wasm_i16x8_splat(static_cast<int16_t>(s.s1))));
  } else {
    return wasm_i32x4_dot_i16x8(wasm_i16x8_add(p0, p1), wasm_i16x8_splat(static_cast<int16_t>(s.s0)));
  }
}

// One row: per super-block the exact integer sum (i32x4 lanes), then (d_w * d_a) * isum added to
// a float accumulator; the sum times F::kFactor at the end, as the reference.
template <typename F, typename Act>
inline float row(int64_t nb, const typename F::Block* x, const BlockQ8_K* y, Act act) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    v128_t sumi = wasm_i32x4_splat(0);
    for (int ib = 0; ib < 8; ++ib) {
      sumi = wasm_i32x4_add(sumi, sub_block_dot<F>(F::sub_block(x[i], ib), act(i, 2 * ib), act(i, 2 * ib + 1)));
    }
    acc = mul_add(acc, F::finish(sumi, x[i], y[i]), F::d(x[i]) * y[i].d);
  }
  return F::kFactor * hsum_f32(acc);
}

}  // namespace ox::kernels::simd128::iquant
