// SIMD128 dot products of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL)
// against Q8_0 / Q8_1. Reference: quant_traits(W).vec_dot_ref; integer block sums exact (for
// any activation byte: products are formed in i16 and summed by dot_i16x8 in i32), float
// accumulation order differs (one f32 per block, four blocks per vector).
#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// A block's 16 packed bytes read as 8 i16 lanes: lane k holds bytes 2k and 2k+1, so its four
// nibbles are elements 2k, 2k+1 (low nibbles) and 16+2k, 17+2k (high nibbles).
struct Nibbles {
  EvenOdd lo;  // elements 0..15
  EvenOdd hi;  // elements 16..31
};
inline Nibbles nibbles(const uint8_t* qs) {
  const v128_t q = load(qs);
  const v128_t m = wasm_i16x8_splat(0x0F);
  return {{wasm_v128_and(q, m), wasm_v128_and(wasm_u16x8_shr(q, 8), m)},
          {wasm_v128_and(wasm_u16x8_shr(q, 4), m), wasm_u16x8_shr(q, 12)}};
}

inline EvenOdd sub16(EvenOdd v, v128_t c) { return {wasm_i16x8_sub(v.even, c), wasm_i16x8_sub(v.odd, c)}; }

// -1 in lane k where bit 2k (even elements) / 2k+1 (odd elements) of `bits16` is clear.
inline EvenOdd bit_clear(uint32_t bits16) {
  const v128_t v = wasm_i16x8_splat(static_cast<int16_t>(bits16));
  const v128_t even = wasm_i16x8_make(1, 4, 16, 64, 256, 1024, 4096, 16384);
  const v128_t odd = wasm_i16x8_make(2, 8, 32, 128, 512, 2048, 8192, -32768);
  const v128_t zero = wasm_i16x8_splat(0);
  return {wasm_i16x8_eq(wasm_v128_and(v, even), zero), wasm_i16x8_eq(wasm_v128_and(v, odd), zero)};
}

// Q5 quants (0..31) from nibbles and the qh bit planes; with `offset16` the 16 is also taken
// off (Q5_0: q - 16 = nibble - 16 * (1 - bit)).
inline Nibbles q5_values(const uint8_t* qs, const uint8_t* qh_bytes, bool offset16) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  Nibbles n = nibbles(qs);
  const v128_t sixteen = wasm_i16x8_splat(16);
  const EvenOdd clear_lo = bit_clear(qh & 0xFFFFu), clear_hi = bit_clear(qh >> 16);
  auto apply = [&](v128_t v, v128_t clear) {
    return offset16 ? wasm_i16x8_sub(v, wasm_v128_and(clear, sixteen))
                    : wasm_v128_or(v, wasm_v128_andnot(sixteen, clear));
  };
  return {{apply(n.lo.even, clear_lo.even), apply(n.lo.odd, clear_lo.odd)},
          {apply(n.hi.even, clear_hi.even), apply(n.hi.odd, clear_hi.odd)}};
}

// sum w * a over a block whose weights are given as even/odd i16 halves.
inline v128_t block_dot(const Nibbles& w, const int8_t* a) {
  return wasm_i32x4_add(dot16(w.lo, split_s8(load(a))), dot16(w.hi, split_s8(load(a + 16))));
}

// sum_i (dx_i * dy_i) * isum(i) over nb blocks, `isum(i)` giving block i's integer dot as
// i32x4 partial sums. Four blocks per step: their totals transposed into one vector and their
// eight fp16 scales converted in two vector conversions (scalar fp16 decoding would cost as
// much as the dot itself here).
template <typename Block, typename Act, typename ISum>
inline float sum_blocks(int64_t nb, const Block* x, const Act* y, ISum isum) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    const v128_t tot = hsum4x4_i32(isum(i), isum(i + 1), isum(i + 2), isum(i + 3));
    const v128_t dx = fp16x4_to_f32(wasm_i32x4_make(x[i].d, x[i + 1].d, x[i + 2].d, x[i + 3].d));
    const v128_t dy = fp16x4_to_f32(wasm_i32x4_make(y[i].d, y[i + 1].d, y[i + 2].d, y[i + 3].d));
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), wasm_f32x4_mul(dx, dy)));
  }
  float sum = hsum_f32(acc);
  for (; i < nb; ++i) sum += static_cast<float>(hsum_i32(isum(i))) * (fp16(x[i].d) * fp16(y[i].d));
  return sum;
}

// sum_i m_i * s_i of Q4_1 / Q5_1 against Q8_1 (x = d*q + m; s = dy * sum(a) is stored).
template <typename Block>
inline float sum_min_terms(int64_t nb, const Block* x, const BlockQ8_1* y) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 3 < nb; i += 4) {
    const v128_t m = fp16x4_to_f32(wasm_i32x4_make(x[i].m, x[i + 1].m, x[i + 2].m, x[i + 3].m));
    const v128_t s = fp16x4_to_f32(wasm_i32x4_make(y[i].s, y[i + 1].s, y[i + 2].s, y[i + 3].s));
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(m, s));
  }
  float sum = hsum_f32(acc);
  for (; i < nb; ++i) sum += fp16(x[i].m) * fp16(y[i].s);
  return sum;
}

}  // namespace

void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const v128_t eight = wasm_i16x8_splat(8);
  *s = sum_blocks(n / kQK4_0, x, y, [&](int64_t i) {
    const Nibbles w = nibbles(x[i].qs);
    return block_dot({sub16(w.lo, eight), sub16(w.hi, eight)}, y[i].qs);
  });
}

void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_1* x = static_cast<const BlockQ4_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK4_1;
  *s = sum_min_terms(nb, x, y) + sum_blocks(nb, x, y, [&](int64_t i) { return block_dot(nibbles(x[i].qs), y[i].qs); });
}

void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = sum_blocks(n / kQK5_0, x, y, [&](int64_t i) { return block_dot(q5_values(x[i].qs, x[i].qh, true), y[i].qs); });
}

void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_1* x = static_cast<const BlockQ5_1*>(vx);
  const BlockQ8_1* y = static_cast<const BlockQ8_1*>(vy);
  const int64_t nb = n / kQK5_1;
  *s = sum_min_terms(nb, x, y) +
       sum_blocks(nb, x, y, [&](int64_t i) { return block_dot(q5_values(x[i].qs, x[i].qh, false), y[i].qs); });
}

void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  *s = sum_blocks(n / kQK8_0, x, y, [&](int64_t i) {
    return block_dot({split_s8(load(x[i].qs)), split_s8(load(x[i].qs + 16))}, y[i].qs);
  });
}

void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockIQ4_NL* x = static_cast<const BlockIQ4_NL*>(vx);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(vy);
  const v128_t table = load(kIQ4NLValues);
  const v128_t m4 = wasm_i8x16_splat(0x0F);
  *s = sum_blocks(n / kQK4_NL, x, y, [&](int64_t i) {
    const v128_t q = load(x[i].qs);
    const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, m4));                     // elements 0..15
    const v128_t hi = wasm_i8x16_swizzle(table, wasm_v128_and(wasm_u16x8_shr(q, 4), m4));  // 16..31
    return block_dot({split_s8(lo), split_s8(hi)}, y[i].qs);
  });
}

}  // namespace ox::kernels::simd128
