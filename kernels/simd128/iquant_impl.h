// The codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K. Each
// format decodes one 32-element sub-block into four i16x8 "octets" (elements 8k..8k+7 of the
// sub-block in octet k): codebook rows loaded and sign-extended in one step (i16x8.load8x8_s; the
// 4-value IQ3 rows two at a time), their signs applied by a multiply with +-1 rows. Octet k of
// the activations is the same load of their quants, so a product is one i16 multiply, with no
// even / odd split on either side. One row loop (row below) serves vec_dot and the gemm per-row
// path; the gemm packing reads the same octets.
// References: vec_dot_iq2_* (core/quant/iq2.cpp), vec_dot_iq3_* (iq3.cpp), vec_dot_iq1_* (iq1.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128::iquant {

// An 8-bit sign field as 8 bytes of +1 / -1 (bit j set: byte j is -1).
constexpr uint64_t sign_row(uint32_t bits) {
  uint64_t m = 0;
  for (int j = 0; j < 8; ++j) m |= uint64_t{((bits >> j) & 1) ? 0xFFu : 0x01u} << (8 * j);
  return m;
}
// The rows of the 7-bit sign fields (IQ2_XXS, IQ2_XS, IQ3_XXS): bit 7 is the parity of the seven
// stored bits (kIQ2Signs, llama.cpp's ksigns_iq2xs), so that the count of negatives is even.
struct SignRows7 {
  uint64_t r[128];
};
inline constexpr SignRows7 kSignRows7 = [] {
  SignRows7 t{};
  for (uint32_t i = 0; i < 128; ++i) t.r[i] = sign_row(i | (__builtin_popcount(i) % 2 == 1 ? 0x80u : 0u));
  return t;
}();
// The rows of every 8-bit sign field (IQ2_S, IQ3_S).
struct SignRows8 {
  uint64_t r[256];
};
inline constexpr SignRows8 kSignRows8 = [] {
  SignRows8 t{};
  for (uint32_t i = 0; i < 256; ++i) t.r[i] = sign_row(i);
  return t;
}();

// The same sign fields as byte masks (bit j set: byte j is 0xFF), for the relaxed bodies
// (relaxed/*_pairs.wat), which apply a sign to the activation as (a ^ m) - m.
constexpr uint64_t sign_mask(uint32_t bits) {
  uint64_t m = 0;
  for (int j = 0; j < 8; ++j) m |= uint64_t{((bits >> j) & 1) ? 0xFFu : 0x00u} << (8 * j);
  return m;
}
inline constexpr SignRows7 kSignMasks7 = [] {
  SignRows7 t{};
  for (uint32_t i = 0; i < 128; ++i) t.r[i] = sign_mask(i | (__builtin_popcount(i) % 2 == 1 ? 0x80u : 0u));
  return t;
}();
inline constexpr SignRows8 kSignMasks8 = [] {
  SignRows8 t{};
  for (uint32_t i = 0; i < 256; ++i) t.r[i] = sign_mask(i);
  return t;
}();

// IQ1_M's weights 8 grid + delta of a group (delta = +-1, in -9..9) by a 12-bit index: the group's
// 8 low index bits, then its qh nibble (3 high index bits, bit 3 the delta's sign: set = -1).
// Built from kIQ1SGrid at start-up (iquant.cpp). One load then gives what the reference's
// 8 grid . q8 + delta sum q8 multiplies: under V8 a third faster than building 8 grid + delta
// from the grid and a delta vector per group pair (646 against 820 us per 1024x4096 matmul, measured
// on the int8 decode this file had before its i16 octets).
extern uint64_t kIQ1MWeights[4096];

// Row e of a table of 8 int8 values as i16x8.
inline v128_t octet(const uint64_t* t, uint32_t e) { return wasm_i16x8_load8x8(t + e); }
// Rows e0, e1 of a table of 4 int8 values as one i16x8.
inline v128_t octet(const uint32_t* t, uint32_t e0, uint32_t e1) {
  return wasm_i16x8_extend_low_i8x16(wasm_v128_load32_lane(t + e1, wasm_v128_load32_zero(t + e0), 1));
}
// Octet o with the signs of a +-1 row applied.
inline v128_t signed_octet(v128_t o, const uint64_t* signs, uint32_t s) { return wasm_i16x8_mul(o, octet(signs, s)); }

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// A decoded sub-block: octet k = elements 8k..8k+7 as i16 (|w| <= 62), and the integer scale of
// elements 0..15 and of 16..31 (the same for the formats with one scale per 32).
struct SubBlock {
  v128_t w[4];
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

// IQ2_XXS / IQ3_XXS: the four 7-bit sign fields of aux (bits 0..27, one per octet) applied, and
// the scale 2 (aux >> 28) + 1.
inline SubBlock with_aux_signs(SubBlock s, uint32_t aux) {
  for (int k = 0; k < 4; ++k) s.w[k] = signed_octet(s.w[k], kSignRows7.r, (aux >> (7 * k)) & 127);
  s.s0 = s.s1 = 2 * static_cast<int>(aux >> 28) + 1;
  return s;
}

// 2 ls + 1 of 16-group 2 ib (low nibble) and 2 ib + 1 (high) of IQ2_XS / IQ2_S.
inline void nibble_scales(SubBlock* s, uint8_t scales) {
  s->s0 = 2 * (scales & 15) + 1;
  s->s1 = 2 * (scales >> 4) + 1;
}

struct IQ2XXS : Base {
  using Block = BlockIQ2_XXS;
  static constexpr float kFactor = 0.125f;
  // 4 grid bytes, then a u32: four 7-bit sign fields and ls in bits 28..31.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    SubBlock s;
    for (int k = 0; k < 4; ++k) s.w[k] = octet(quant::kIQ2XXSGrid, q[k]);
    return with_aux_signs(s, load_u32(q + 4));
  }
};

struct IQ2XS : Base {
  using Block = BlockIQ2_XS;
  static constexpr float kFactor = 0.125f;
  static constexpr bool kPer16 = true;
  // One u16 per octet: 9-bit grid index, 7 sign bits above it.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint16_t* q = b.qs + 4 * ib;
    SubBlock s;
    for (int k = 0; k < 4; ++k) s.w[k] = signed_octet(octet(quant::kIQ2XSGrid, q[k] & 511), kSignRows7.r, q[k] >> 9);
    nibble_scales(&s, b.scales[ib]);
    return s;
  }
};

struct IQ2S : Base {
  using Block = BlockIQ2_S;
  static constexpr float kFactor = 0.125f;
  static constexpr bool kPer16 = true;
  // Octet k = 4 ib + l: index qs[k] plus bits 2l..2l+1 of qh[ib] as bits 8..9; signs qs[32 + k].
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const uint8_t* signs = b.qs + kQK_K / 8 + 4 * ib;
    const uint32_t qh = b.qh[ib];
    SubBlock s;
    for (int k = 0; k < 4; ++k) {
      s.w[k] = signed_octet(octet(quant::kIQ2SGrid, q[k] | ((qh << (8 - 2 * k)) & 0x300)), kSignRows8.r, signs[k]);
    }
    nibble_scales(&s, b.scales[ib]);
    return s;
  }
};

struct IQ3XXS : Base {
  using Block = BlockIQ3_XXS;
  static constexpr float kFactor = 0.25f;
  // 8 grid bytes per sub-block (two rows per octet); its u32 at qs[64 + 4 ib]: four 7-bit sign
  // fields, s in bits 28..31.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    SubBlock s;
    for (int k = 0; k < 4; ++k) s.w[k] = octet(quant::kIQ3XXSGrid, q[2 * k], q[2 * k + 1]);
    return with_aux_signs(s, load_u32(b.qs + kQK_K / 4 + 4 * ib));
  }
};

struct IQ3S : Base {
  using Block = BlockIQ3_S;
  static constexpr float kFactor = 1.0f;
  // Row l's index: qs[8 ib + l] plus bit l of qh[ib] as bit 8; 8-bit sign bytes; 1 + 2 s.
  static SubBlock sub_block(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint32_t qh = b.qh[ib];
    auto index = [&](int l) { return q[l] | ((qh << (8 - l)) & 256); };
    SubBlock s;
    for (int k = 0; k < 4; ++k) {
      s.w[k] = signed_octet(octet(quant::kIQ3SGrid, index(2 * k), index(2 * k + 1)), kSignRows8.r, b.signs[4 * ib + k]);
    }
    s.s0 = s.s1 = 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 15) + 1;
    return s;
  }
};

// IQ1_S: isum = sum_ib (2 s + 1) (8 grid . q8 + delta sum q8). sub_block gives the grid (values
// -1, 0, 1) with scale 2 s + 1; finish() multiplies by 8 and adds the delta terms, from the
// activations' bsums as the reference reads them.
struct IQ1S : Base {
  using Block = BlockIQ1_S;
  static constexpr float kFactor = 0.125f;
  // Group k's index: qs[4 ib + k] plus bits 3k..3k+2 of qh[ib] as bits 8..10; s in bits 12..14.
  static uint32_t index(const Block& b, int ib, int k) { return b.qs[4 * ib + k] | (((b.qh[ib] >> (3 * k)) & 7) << 8); }
  static SubBlock sub_block(const Block& b, int ib) {
    SubBlock s;
    for (int k = 0; k < 4; ++k) s.w[k] = octet(quant::kIQ1SGrid, index(b, ib, k));
    s.s0 = s.s1 = 2 * ((b.qh[ib] >> 12) & 7) + 1;
    return s;
  }
  // The gemm's units (iquant.cpp): the weights 8 grid + delta from kIQ1MWeights (qh bit 15, the
  // delta's sign, as index bit 11), so that a unit's dot is 8 grid . q8 + delta sum q8 with sum q8
  // counted from the quants, where the reference reads it from bsums (the same for every Q8_K row
  // the quantizer makes).
  static SubBlock unit_weights(const Block& b, int ib) {
    SubBlock s = sub_block(b, ib);
    const uint32_t delta = (b.qh[ib] & 0x8000u) >> 4;
    for (int k = 0; k < 4; ++k) s.w[k] = octet(kIQ1MWeights, index(b, ib, k) | delta);
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
  // Group g = 4 ib + k: qs[g] and nibble g % 2 of qh[g / 2]; 16-group h's scale at bits 3 (h % 4)
  // of u16 h / 4.
  static SubBlock sub_block(const Block& b, int ib) {
    SubBlock s;
    for (int k = 0; k < 4; ++k) {
      const uint32_t nibble = (b.qh[2 * ib + k / 2] >> (4 * (k % 2))) & 15;
      s.w[k] = octet(kIQ1MWeights, b.qs[4 * ib + k] | (nibble << 8));
    }
    const uint64_t sc = scale_bits(b) >> (16 * (ib / 2) + 6 * (ib % 2));
    s.s0 = 2 * static_cast<int>(sc & 7) + 1;
    s.s1 = 2 * static_cast<int>((sc >> 3) & 7) + 1;
    return s;
  }
};

// The scaled integer dot of sub-block ib of super-block i against its activations, octet k read as
// i16 straight from y.qs. An i16 lane adds two (kPer16) or four products, |w * a| <= 62 * 128:
// below 2^15.
template <typename F>
inline v128_t sub_block_dot(const SubBlock& s, const int8_t* a) {
  const v128_t p01 = wasm_i16x8_add(wasm_i16x8_mul(s.w[0], wasm_i16x8_load8x8(a)), wasm_i16x8_mul(s.w[1], wasm_i16x8_load8x8(a + 8)));
  const v128_t p23 = wasm_i16x8_add(wasm_i16x8_mul(s.w[2], wasm_i16x8_load8x8(a + 16)), wasm_i16x8_mul(s.w[3], wasm_i16x8_load8x8(a + 24)));
  if constexpr (F::kPer16) {
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(p01, wasm_i16x8_splat(static_cast<int16_t>(s.s0))),
                          wasm_i32x4_dot_i16x8(p23, wasm_i16x8_splat(static_cast<int16_t>(s.s1))));
  } else {
    return wasm_i32x4_dot_i16x8(wasm_i16x8_add(p01, p23), wasm_i16x8_splat(static_cast<int16_t>(s.s0)));
  }
}

// One row: per super-block the exact integer sum (i32x4 lanes), then (d_w * d_a) * isum added to
// a float accumulator; the sum times F::kFactor at the end, as the reference.
template <typename F>
inline float row(int64_t nb, const typename F::Block* x, const BlockQ8_K* y) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    v128_t sumi = wasm_i32x4_splat(0);
    for (int ib = 0; ib < 8; ++ib) sumi = wasm_i32x4_add(sumi, sub_block_dot<F>(F::sub_block(x[i], ib), y[i].qs + 32 * ib));
    acc = mul_add(acc, F::finish(sumi, x[i], y[i]), F::d(x[i]) * y[i].d);
  }
  return F::kFactor * hsum_f32(acc);
}

}  // namespace ox::kernels::simd128::iquant
