// Row dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4),
// written over an activation source so that vec_dot (which splits each activation block as it
// goes) and the gemm per-row path (which reads blocks split once per call) share them.
// Reference: quant_traits(W).vec_dot_ref; integer block sums exact (for any activation byte:
// products are formed in i16 and summed by dot_i16x8 in i32), float order differs.
#pragma once

#include "core/quant/blocks.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128::block32 {

// A block's 32 values as i16 lanes in two halves of 16 (even / odd elements of each).
struct Halves {
  EvenOdd lo;  // elements 0..15
  EvenOdd hi;  // elements 16..31
};

// Activation block i split on the fly (vec_dot).
template <typename ActBlock>
struct SplitOnTheFly {
  const ActBlock* y;
  Halves operator()(int64_t i) const { return {split_s8(load(y[i].qs)), split_s8(load(y[i].qs + 16))}; }
};

// Activation block i read from gemm::split_acts (chunks 2i, 2i + 1).
struct PreSplit {
  const v128_t* p;
  Halves operator()(int64_t i) const { return {{p[4 * i], p[4 * i + 1]}, {p[4 * i + 2], p[4 * i + 3]}}; }
};

// The vector constants of the weight readers below. The decode loops take them from
// opaque_consts() so that V8 does not rebuild them inside the loop (see Fp16Consts in util.h);
// vec_dot and the prefill packing use inline_consts().
struct Consts {
  v128_t nibble16;         // i16 0x000F
  v128_t nibble8;          // i8 0x0F
  v128_t sixteen8;         // i8 16
  v128_t low_byte;         // i16 0x00FF
  v128_t q5_bit;           // byte i: its bit within its qh byte
  v128_t q5_spread_lo;     // byte i: the qh byte holding element i's bit (elements 0..15)
  v128_t q5_spread_hi;     // same for elements 16..31
  v128_t iq4_nl_values;    // the IQ4_NL codebook
  v128_t mxfp4_values;     // the MXFP4 codebook (kMXFP4Values)
};
inline Consts inline_consts() {
  return {wasm_i16x8_splat(0x0F),
          wasm_i8x16_splat(0x0F),
          wasm_i8x16_splat(16),
          wasm_i16x8_splat(0x00FF),
          wasm_u8x16_make(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128),
          wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
          wasm_i8x16_make(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3),
          load(kIQ4NLValues),
          load(kMXFP4Values)};
}
Consts opaque_consts();  // the same values, read from linear memory (gemm_tile.cpp)

// A block's 16 packed bytes read as 8 i16 lanes: lane k holds bytes 2k and 2k+1, so its four
// nibbles are elements 2k, 2k+1 (low nibbles) and 16+2k, 17+2k (high nibbles).
inline Halves nibbles(const uint8_t* qs, const Consts& c) {
  const v128_t q = load(qs);
  return {{wasm_v128_and(q, c.nibble16), wasm_v128_and(wasm_u16x8_shr(q, 8), c.nibble16)},
          {wasm_v128_and(wasm_u16x8_shr(q, 4), c.nibble16), wasm_u16x8_shr(q, 12)}};
}

inline EvenOdd split_u8(v128_t v, const Consts& c) { return {wasm_v128_and(v, c.low_byte), wasm_u16x8_shr(v, 8)}; }

inline EvenOdd sub16(EvenOdd v, v128_t c) { return {wasm_i16x8_sub(v.even, c), wasm_i16x8_sub(v.odd, c)}; }

// The 32 values of a Q5 block, nibble + 16 * qh bit (0..31), as bytes in element order: lo holds
// elements 0..15, hi elements 16..31. Each byte's qh bit is fetched by a swizzle of the four qh
// bytes and tested against that byte's bit, 16 bytes per test (vec_dot and the prefill packing;
// the decode path adds the fifth bits by table, gemm_block32.cpp).
struct Q5Bytes {
  v128_t lo;
  v128_t hi;
};
inline Q5Bytes q5_bytes(const uint8_t* qs, const uint8_t* qh_bytes, const Consts& c) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  // The bits are tested inverted, against zero: LLVM rewrites a test of (x & bit) == bit into
  // i8x16.ne, which V8 lowers to three instructions where eq is one.
  const v128_t inverted = wasm_i32x4_splat(static_cast<int32_t>(~qh));
  auto fifth_bits = [&](v128_t spread) {  // 16 in byte i where its qh bit is set
    const v128_t clear = wasm_v128_and(wasm_i8x16_swizzle(inverted, spread), c.q5_bit);
    return wasm_v128_and(wasm_i8x16_eq(clear, wasm_i8x16_splat(0)), c.sixteen8);
  };
  // High nibbles by a 16-bit shift and the low-nibble mask: V8 lowers i8x16.shr_u to the same
  // shift plus a mask it rebuilds at every use.
  const v128_t q = load(qs);
  return {wasm_v128_or(wasm_v128_and(q, c.nibble8), fifth_bits(c.q5_spread_lo)),
          wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(q, 4), c.nibble8), fifth_bits(c.q5_spread_hi))};
}

// sum w * a over a block, both given as halves.
inline v128_t block_dot(const Halves& w, const Halves& a) {
  return wasm_i32x4_add(dot16(w.lo, a.lo), dot16(w.hi, a.hi));
}

// sum_i (dx_i * dy_i) * isum(i) over nb blocks, `isum(i)` giving block i's integer dot as
// i32x4 partial sums. Four blocks per step: their totals transposed into one vector and their
// eight fp16 scales converted in two vector conversions by block_scales4 (scalar fp16 decoding
// would cost as much as the dot itself here); block_scale for the tail.
template <typename Block, typename Act>
inline v128_t block_scales4(const Block* x, const Act* y) {
  const v128_t dx = fp16x4_to_f32(gather_halves4(&x[0].d, &x[1].d, &x[2].d, &x[3].d));
  const v128_t dy = fp16x4_to_f32(gather_halves4(&y[0].d, &y[1].d, &y[2].d, &y[3].d));
  return wasm_f32x4_mul(dx, dy);
}
// mxfp4_scale of four exponent bytes (one per u32 lane) in vector form, bit for bit: e >= 2 gives
// the normal float 2^(e - 128), bits (e - 1) << 23; e = 0 and 1 give the subnormals 2^-128 and
// 2^-127, bits 0x00200000 << e, which for e < 2 equals (e + 1) << 21.
inline v128_t mxfp4_scales4(v128_t e) {
  const v128_t one = wasm_i32x4_splat(1);
  const v128_t normal = wasm_i32x4_shl(wasm_i32x4_sub(e, one), 23);
  const v128_t subnormal = wasm_i32x4_shl(wasm_i32x4_add(e, one), 21);
  return wasm_v128_bitselect(subnormal, normal, wasm_i32x4_lt(e, wasm_i32x4_splat(2)));
}
inline v128_t mxfp4_scales4(const BlockMXFP4& x0, const BlockMXFP4& x1, const BlockMXFP4& x2, const BlockMXFP4& x3) {
  return mxfp4_scales4(wasm_i32x4_make(x0.e, x1.e, x2.e, x3.e));
}
// MXFP4's weight scales are exponent bytes, not fp16.
inline v128_t block_scales4(const BlockMXFP4* x, const BlockQ8_0* y) {
  const v128_t dx = mxfp4_scales4(x[0], x[1], x[2], x[3]);
  const v128_t dy = fp16x4_to_f32(gather_halves4(&y[0].d, &y[1].d, &y[2].d, &y[3].d));
  return wasm_f32x4_mul(dx, dy);
}
template <typename Block, typename Act>
inline float block_scale(const Block& x, const Act& y) {
  return fp16(x.d) * fp16(y.d);
}
inline float block_scale(const BlockMXFP4& x, const BlockQ8_0& y) { return mxfp4_scale(x.e) * fp16(y.d); }

template <typename Block, typename Act, typename ISum>
inline float sum_blocks(int64_t nb, const Block* x, const Act* y, ISum isum) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    const v128_t tot = hsum4x4_i32(isum(i), isum(i + 1), isum(i + 2), isum(i + 3));
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), block_scales4(x + i, y + i)));
  }
  float sum = hsum_f32(acc);
  for (; i < nb; ++i) sum += static_cast<float>(hsum_i32(isum(i))) * block_scale(x[i], y[i]);
  return sum;
}

// sum_i m_i * s_i of Q4_1 / Q5_1 against Q8_1 (x = d*q + m; s = dy * sum(a) is stored).
template <typename Block>
inline float sum_min_terms(int64_t nb, const Block* x, const BlockQ8_1* y) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    const v128_t m = fp16x4_to_f32(gather_halves4(&x[i].m, &x[i + 1].m, &x[i + 2].m, &x[i + 3].m));
    const v128_t s = fp16x4_to_f32(gather_halves4(&y[i].s, &y[i + 1].s, &y[i + 2].s, &y[i + 3].s));
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(m, s));
  }
  float sum = hsum_f32(acc);
  for (; i < nb; ++i) sum += fp16(x[i].m) * fp16(y[i].s);
  return sum;
}

// Each format's weights of one block as halves: even / odd elements of 0..15 and of 16..31.
inline Halves weights_q4_0(const BlockQ4_0& b, const Consts& c) {
  const v128_t eight = wasm_i16x8_splat(8);
  const Halves w = nibbles(b.qs, c);
  return {sub16(w.lo, eight), sub16(w.hi, eight)};
}
// Q4_0's values plus 8 (0..15, as stored): the decode path takes 8 * sum(a) off once per block
// and four rows instead of 32 subtractions per row.
inline Halves weights_q4_0_plus8(const BlockQ4_0& b, const Consts& c) { return nibbles(b.qs, c); }
inline Halves weights_q4_1(const BlockQ4_1& b, const Consts& c) { return nibbles(b.qs, c); }
inline Halves weights_q5_0(const BlockQ5_0& b, const Consts& c) {
  const Q5Bytes v = q5_bytes(b.qs, b.qh, c);
  return {split_s8(wasm_i8x16_sub(v.lo, c.sixteen8)), split_s8(wasm_i8x16_sub(v.hi, c.sixteen8))};
}
inline Halves weights_q5_1(const BlockQ5_1& b, const Consts& c) {
  const Q5Bytes v = q5_bytes(b.qs, b.qh, c);
  return {split_u8(v.lo, c), split_u8(v.hi, c)};
}
inline Halves weights_q8_0(const BlockQ8_0& b, const Consts&) {
  return {split_s8(load(b.qs)), split_s8(load(b.qs + 16))};
}
// A block of 16 packed nibbles looked up in a 16-entry codebook (IQ4_NL, MXFP4).
inline Halves codebook_weights(const uint8_t* qs, v128_t table, const Consts& c) {
  const v128_t q = load(qs);
  const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, c.nibble8));                     // 0..15
  const v128_t hi = wasm_i8x16_swizzle(table, wasm_v128_and(wasm_u16x8_shr(q, 4), c.nibble8));  // 16..31
  return {split_s8(lo), split_s8(hi)};
}
inline Halves weights_iq4_nl(const BlockIQ4_NL& b, const Consts& c) { return codebook_weights(b.qs, c.iq4_nl_values, c); }
inline Halves weights_mxfp4(const BlockMXFP4& b, const Consts& c) { return codebook_weights(b.qs, c.mxfp4_values, c); }

// One row: sum_i dx_i * dy_i * (w_i . a_i) (+ sum_i m_i * s_i for the formats with a min).
template <typename Block, typename ActBlock, typename Weights, typename Act>
inline float dot_row(int64_t nb, const Block* x, const ActBlock* y, Weights weights, Act act) {
  return sum_blocks(nb, x, y, [&](int64_t i) { return block_dot(weights(x[i]), act(i)); });
}

template <typename Act>
inline float dot_q4_0(int64_t nb, const BlockQ4_0* x, const BlockQ8_0* y, Act act) {
  const Consts c = inline_consts();
  return dot_row(nb, x, y, [&c](const auto& b) { return weights_q4_0(b, c); }, act);
}
template <typename Act>
inline float dot_q4_1(int64_t nb, const BlockQ4_1* x, const BlockQ8_1* y, Act act) {
  const Consts c = inline_consts();
  return sum_min_terms(nb, x, y) + dot_row(nb, x, y, [&c](const auto& b) { return weights_q4_1(b, c); }, act);
}
template <typename Act>
inline float dot_q5_0(int64_t nb, const BlockQ5_0* x, const BlockQ8_0* y, Act act) {
  const Consts c = inline_consts();
  return dot_row(nb, x, y, [&c](const auto& b) { return weights_q5_0(b, c); }, act);
}
template <typename Act>
inline float dot_q5_1(int64_t nb, const BlockQ5_1* x, const BlockQ8_1* y, Act act) {
  const Consts c = inline_consts();
  return sum_min_terms(nb, x, y) + dot_row(nb, x, y, [&c](const auto& b) { return weights_q5_1(b, c); }, act);
}
template <typename Act>
inline float dot_q8_0(int64_t nb, const BlockQ8_0* x, const BlockQ8_0* y, Act act) {
  const Consts c = inline_consts();
  return dot_row(nb, x, y, [&c](const auto& b) { return weights_q8_0(b, c); }, act);
}
template <typename Act>
inline float dot_iq4_nl(int64_t nb, const BlockIQ4_NL* x, const BlockQ8_0* y, Act act) {
  const Consts c = inline_consts();
  return dot_row(nb, x, y, [&c](const auto& b) { return weights_iq4_nl(b, c); }, act);
}

template <typename Act>
inline float dot_mxfp4(int64_t nb, const BlockMXFP4* x, const BlockQ8_0* y, Act act) {
  const Consts c = inline_consts();
  return dot_row(nb, x, y, [&c](const auto& b) { return weights_mxfp4(b, c); }, act);
}

}  // namespace ox::kernels::simd128::block32
