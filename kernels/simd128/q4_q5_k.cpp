// SIMD128 dot products of Q4_K and Q5_K against Q8_K. Reference: quant_traits(Q4_K / Q5_K).vec_dot_ref.
// Per super-block: d*dy*sum_j sc_j*(q.a)_j - dmin*dy*sum_j m_j*bsums_j; integer parts exact.
#include "core/quant/blocks.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// 16 packed bytes in i16-lane form: lane k's low nibbles are elements 2k / 2k+1 of the
// low-nibble run, its high nibbles elements 2k / 2k+1 of the high-nibble run.
struct Nibbles {
  EvenOdd lo;
  EvenOdd hi;
};
inline Nibbles nibbles(v128_t q) {
  const v128_t m = wasm_i16x8_splat(0x0F);
  return {{wasm_v128_and(q, m), wasm_v128_and(wasm_u16x8_shr(q, 8), m)},
          {wasm_v128_and(wasm_u16x8_shr(q, 4), m), wasm_u16x8_shr(q, 12)}};
}

// sum_j m_j * (bsums[2j] + bsums[2j+1]) as i32x4 partial sums.
inline v128_t min_dot(uint64_t mins, const int16_t* bsums) {
  const v128_t m8 = wasm_i64x2_make(static_cast<int64_t>(mins), 0);
  const v128_t dup = wasm_i8x16_shuffle(m8, m8, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(load(bsums), wasm_u16x8_extend_low_u8x16(dup)),
                        wasm_i32x4_dot_i16x8(load(bsums + 8), wasm_u16x8_extend_high_u8x16(dup)));
}

// One super-block's scaled sum. `weights(c, t, q)` turns the 16 qs bytes of chunk c, half t
// into lane-form weights (Q4_K: the nibbles; Q5_K: nibbles plus 5th bits).
template <typename Weights>
inline v128_t superblock_dot(const uint8_t* qs, const int8_t* a, const uint8_t scales[8], Weights weights) {
  v128_t sumi = wasm_i32x4_splat(0);
  for (int c = 0; c < 4; ++c) {  // chunk c: sub-blocks 2c (low nibbles) and 2c+1 (high nibbles)
    v128_t s_lo = wasm_i32x4_splat(0), s_hi = wasm_i32x4_splat(0);
    for (int t = 0; t < 2; ++t) {
      const Nibbles w = weights(c, t, load(qs + 32 * c + 16 * t));
      s_lo = wasm_i32x4_add(s_lo, dot16(w.lo, split_s8(load(a + 64 * c + 16 * t))));
      s_hi = wasm_i32x4_add(s_hi, dot16(w.hi, split_s8(load(a + 64 * c + 32 + 16 * t))));
    }
    sumi = wasm_i32x4_add(sumi, wasm_i32x4_mul(s_lo, wasm_i32x4_splat(scales[2 * c])));
    sumi = wasm_i32x4_add(sumi, wasm_i32x4_mul(s_hi, wasm_i32x4_splat(scales[2 * c + 1])));
  }
  return sumi;
}

}  // namespace

void vec_dot_q4_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const KScales k = unpack_k4_scales(x[i].scales);
    const v128_t sumi = superblock_dot(x[i].qs, y[i].qs, k.scales, [](int, int, v128_t q) { return nibbles(q); });
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, min_dot(k.mins, y[i].bsums), y[i].d * fp16(x[i].dmin));
  }
  *s = hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

void vec_dot_q5_k_q8_k(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ5_K* x = static_cast<const BlockQ5_K*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  v128_t acc = wasm_f32x4_splat(0.0f), acc_min = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const KScales k = unpack_k4_scales(x[i].scales);
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
    const v128_t sumi = superblock_dot(x[i].qs, y[i].qs, k.scales, high);
    acc = mul_add(acc, sumi, y[i].d * fp16(x[i].d));
    acc_min = mul_add(acc_min, min_dot(k.mins, y[i].bsums), y[i].d * fp16(x[i].dmin));
  }
  *s = hsum_f32(wasm_f32x4_sub(acc, acc_min));
}

}  // namespace ox::kernels::simd128
