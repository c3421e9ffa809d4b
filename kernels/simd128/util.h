// SIMD128 building blocks shared by the kernel files of this folder. wasm has no 8-bit
// multiply-add, so int8 dot products widen to i16 by shifts (even / odd bytes of each i16 lane)
// and use i32x4.dot_i16x8_s, which V8 lowers to one pmaddwd (x86) or smull/smlal pair (arm).
#pragma once

#include <wasm_simd128.h>

#include <cstdint>
#include <cstring>

#include "core/quant/traits.h"

namespace ox::kernels::simd128 {

static inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// fp16 -> f32 without branches and without a subnormal float operand, bit-identical to
// ox::fp16_to_f32. Exponent and mantissa move into f32 position and the exponent is rebiased by
// an integer add; a zero or subnormal half (exponent 0) is built as 2^-14 * (1 + m / 1024) and
// 2^-14 subtracted, which leaves m * 2^-24 exactly; Inf/NaN get their exponent bits or-ed to all
// ones after the float step, so their payload never meets an instruction that could quiet it.
// Why not the shorter "bits times 2^112": for a subnormal half that multiplies a subnormal f32.
// Real models' Q6_K scales are mostly fp16 subnormals (d ~ 1e-5), and with them the relaxed Q6_K
// decode loop ran 42% slower under V8 (bench/gemm_stream.cpp --weight-std 0.02), perf putting the
// samples on that vmulps. A native loop of the same vmulps showed no penalty, so what makes V8's
// code pay for it is not pinned down; the integer path avoids the question.
constexpr uint32_t kFp16Rebias = 112u << 23;         // fp16 exponent bias 15 -> f32 127
constexpr uint32_t kFp16SubnormalBump = 1u << 23;     // exponent 0 -> 113: 2^-14 * (1 + m / 1024)
constexpr uint32_t kFp16SubnormalBase = 113u << 23;   // 2^-14 as f32 bits
static inline float fp16(uint16_t h) {
  const uint32_t em = h & 0x7FFFu, exponent = h & 0x7C00u;
  const uint32_t tiny = exponent == 0 ? ~0u : 0u, special = exponent == 0x7C00u ? ~0u : 0u;
  const float mag = bits_to_f32((em << 13) + kFp16Rebias + (tiny & kFp16SubnormalBump)) -
                    bits_to_f32(tiny & kFp16SubnormalBase);
  uint32_t u;
  std::memcpy(&u, &mag, 4);
  return bits_to_f32(u | (special & 0x7F800000u) | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

// The constants of fp16x4_to_f32, as loop operands. V8 rebuilds a v128.const at every use (two
// to four instructions) and LLVM, taking constants as free, leaves them inside loops; a hot loop
// takes these from fp16_consts() (read from linear memory, gemm_tile.cpp) before it instead.
struct Fp16Consts {
  v128_t rebias;          // kFp16Rebias
  v128_t subnormal_bump;  // kFp16SubnormalBump
  v128_t subnormal_base;  // kFp16SubnormalBase
  v128_t exponent;        // 0x7C00: the fp16 exponent field (0: zero or subnormal; all ones: Inf/NaN)
  v128_t f32_exponent;    // 0x7F800000
};
Fp16Consts fp16_consts();

// Four fp16 values (low 16 bits of each u32 lane, upper bits zero) -> f32, exactly as
// ox::fp16_to_f32, the same steps as fp16() above. Shifted up 17 and down 4, the exponent and
// mantissa land in f32 position without the sign, which comes back from bit 15 at the end.
static inline v128_t fp16x4_to_f32(v128_t h, const Fp16Consts& c) {
  const v128_t em = wasm_u32x4_shr(wasm_i32x4_shl(h, 17), 4);
  const v128_t exponent = wasm_v128_and(h, c.exponent);
  const v128_t tiny = wasm_i32x4_eq(exponent, wasm_i32x4_splat(0));
  const v128_t special = wasm_i32x4_eq(exponent, c.exponent);
  const v128_t u = wasm_i32x4_add(wasm_i32x4_add(em, c.rebias), wasm_v128_and(tiny, c.subnormal_bump));
  const v128_t mag = wasm_f32x4_sub(u, wasm_v128_and(tiny, c.subnormal_base));
  return wasm_v128_or(wasm_v128_or(mag, wasm_v128_and(special, c.f32_exponent)), wasm_i32x4_shl(wasm_u32x4_shr(h, 15), 31));
}
static inline v128_t fp16x4_to_f32(v128_t h) {
  const Fp16Consts c{wasm_i32x4_splat(static_cast<int32_t>(kFp16Rebias)),
                     wasm_i32x4_splat(static_cast<int32_t>(kFp16SubnormalBump)),
                     wasm_i32x4_splat(static_cast<int32_t>(kFp16SubnormalBase)), wasm_i32x4_splat(0x7C00),
                     wasm_i32x4_splat(0x7F800000)};
  return fp16x4_to_f32(h, c);
}

// The short path for eight finite fp16 values in one vector (an F16 KV cache's keys and values, F16
// weights): the half's bits moved into f32 position by integer shifts (an arithmetic shift copies
// the sign over the three exponent bits f32 has in excess), then scaled by 2^112 (exponent bias 15
// -> 127). The product is exact for every finite half, subnormals included (a subnormal half gives a
// subnormal f32 operand, rare in activations; see fp16x4_to_f32 for why scales avoid it); Inf and
// NaN would come out finite, so callers first ask any_special and take fp16x4_to_f32 then.
// The constants are loop operands read from linear memory (see Fp16Consts): fp16_fast_consts().
constexpr uint32_t kFp16SignExpMantissa = 0x8FFFE000u;  // sign, 5 + 10 bits of the half, in f32 position
constexpr float kFp16Scale = 0x1p112f;
struct Fp16Fast {
  v128_t sign_exp_mantissa;  // kFp16SignExpMantissa
  v128_t scale;              // kFp16Scale
  v128_t exponent;           // 0x7C00 in each u16: the fp16 exponent field
  v128_t zero;
  bool any_special(v128_t h) const {  // an Inf or NaN among the eight halves
    return wasm_v128_any_true(wasm_i16x8_eq(wasm_v128_and(h, exponent), exponent));
  }
  bool any_special(v128_t a, v128_t b) const {
    return wasm_v128_any_true(wasm_v128_or(wasm_i16x8_eq(wasm_v128_and(a, exponent), exponent),
                                           wasm_i16x8_eq(wasm_v128_and(b, exponent), exponent)));
  }
  // The even (low) and odd (high) u16 of each u32 lane of h, as f32.
  v128_t even(v128_t h) const { return odd(wasm_i32x4_shl(h, 16)); }
  v128_t odd(v128_t h) const {
    return wasm_f32x4_mul(wasm_v128_and(wasm_i32x4_shr(h, 3), sign_exp_mantissa), scale);
  }
  // Elements 0-3 / 4-7 of h, as f32 (interleaved with zeros: each half in its lane's top 16 bits).
  v128_t low4(v128_t h) const { return odd(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11)); }
  v128_t high4(v128_t h) const { return odd(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15)); }
};
Fp16Fast fp16_fast_consts();

// Four fp16 scales (the low 16 bits of each u32 lane, as gather_halves4 leaves them) as f32: the
// short path when all four are normal halves; a zero, subnormal, Inf or NaN among them takes
// fp16x4_to_f32 (a subnormal scale must not reach a float multiply: see fp16x4_to_f32). Exact
// either way.
static inline v128_t fp16x4_scales_to_f32(v128_t h, const Fp16Consts& fc, const Fp16Fast& c) {
  const v128_t exponent = wasm_v128_and(h, fc.exponent);
  if (wasm_v128_any_true(wasm_v128_or(wasm_i32x4_eq(exponent, c.zero), wasm_i32x4_eq(exponent, fc.exponent)))) {
    return fp16x4_to_f32(h, fc);
  }
  return c.even(h);
}

// Four fp16 values from four addresses, each zero-extended into its u32 lane (the input of
// fp16x4_to_f32): one v128.load16_lane per value, where building the vector from scalars takes
// a load and a lane insert each.
static inline v128_t gather_halves4(const uint16_t* h0, const uint16_t* h1, const uint16_t* h2, const uint16_t* h3) {
  v128_t v = wasm_i32x4_splat(0);
  v = wasm_v128_load16_lane(h0, v, 0);
  v = wasm_v128_load16_lane(h1, v, 2);
  v = wasm_v128_load16_lane(h2, v, 4);
  return wasm_v128_load16_lane(h3, v, 6);
}

// ox::quant::fp16_saturate restated with internal linkage (see kernels/x86/avx2/util.h).
static inline uint16_t fp16_saturate(float f) {
  return f32_to_fp16(__builtin_fminf(65504.0f, __builtin_fmaxf(-65504.0f, f)));
}

static inline v128_t load(const void* p) { return wasm_v128_load(p); }

// The int8 lanes of v as two i16x8 vectors: even bytes (elements 0, 2, ...) and odd bytes.
struct EvenOdd {
  v128_t even;
  v128_t odd;
};
static inline EvenOdd split_s8(v128_t v) { return {wasm_i16x8_shr(wasm_i16x8_shl(v, 8), 8), wasm_i16x8_shr(v, 8)}; }
// Same for unsigned bytes (zero-extended).
static inline EvenOdd split_u8(v128_t v) { return {wasm_v128_and(v, wasm_i16x8_splat(0x00FF)), wasm_u16x8_shr(v, 8)}; }

// i32x4 partial sums of sum_i w[i] * a[i] over 16 elements given as even / odd i16 halves.
static inline v128_t dot16(EvenOdd w, EvenOdd a) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(w.even, a.even), wasm_i32x4_dot_i16x8(w.odd, a.odd));
}

// Lane k = sum of the four lanes of the k-th argument (a 4x4 transpose folded into adds).
static inline v128_t hsum4x4_i32(v128_t a, v128_t b, v128_t c, v128_t d) {
  const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
  const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

static inline float hsum_f32(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 2) +
         wasm_f32x4_extract_lane(v, 3);
}

static inline int32_t hsum_i32(v128_t v) {
  return wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1) + wasm_i32x4_extract_lane(v, 2) +
         wasm_i32x4_extract_lane(v, 3);
}

// acc + float(sum) * d, the per-block float step (wasm SIMD128 has no FMA).
static inline v128_t mul_add(v128_t acc, v128_t isum, float d) {
  return wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(isum), wasm_f32x4_splat(d)));
}

// K-quant scale unpacking, same bit layouts as kernels/x86/avx2/util.h describes.
struct KScales {
  uint8_t scales[8];  // read one at a time
  uint64_t mins;      // byte j = min j, kept in a register for the vector min dot
};
static inline KScales unpack_k4_scales(const uint8_t* p) {
  uint32_t a[3];
  std::memcpy(a, p, 12);
  const uint32_t sc[2] = {a[0] & 0x3f3f3f3fu, (a[2] & 0x0f0f0f0fu) | (((a[0] >> 6) & 0x03030303u) << 4)};
  const uint32_t mn0 = a[1] & 0x3f3f3f3fu, mn1 = ((a[2] >> 4) & 0x0f0f0f0fu) | (((a[1] >> 6) & 0x03030303u) << 4);
  KScales k;
  std::memcpy(k.scales, sc, 8);
  k.mins = mn0 | (static_cast<uint64_t>(mn1) << 32);
  return k;
}

// Q3_K's sixteen scales, bias removed (-32..31), byte j = scale j; built in registers (a byte
// array reloaded as a vector would stall store forwarding).
static inline v128_t q3_k_scales(const uint8_t* p) {
  uint32_t a[3];
  std::memcpy(a, p, 12);
  const v128_t w =
      wasm_i32x4_make(static_cast<int32_t>((a[0] & 0x0f0f0f0fu) | ((a[2] & 0x03030303u) << 4)),
                      static_cast<int32_t>((a[1] & 0x0f0f0f0fu) | (((a[2] >> 2) & 0x03030303u) << 4)),
                      static_cast<int32_t>(((a[0] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 4) & 0x03030303u) << 4)),
                      static_cast<int32_t>(((a[1] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 6) & 0x03030303u) << 4)));
  return wasm_i8x16_sub(w, wasm_i8x16_splat(32));
}

// The 16-element sub-block layout of Q2_K, Q3_K and Q6_K: elements 128h + 32j + 16t + (0..15)
// form sub-block k = 8h + 2j + t. Sums scale_k * (u . a) over all 16, where `plane(h, t, j)`
// gives sub-block k's weights u in lane form (even / odd bytes as i16) and `act(k)` its
// activations as even / odd i16. The loop over (h, t) stays rolled (the four planes j of one
// (h, t) share their loads): fully unrolled, LLVM hoists every load to the top and V8 spills
// them; rolled over all 16, the shifts by j stop being constants.
template <typename Act, typename Plane>
static inline v128_t scaled_planes(Act act, const int8_t scales[16], Plane plane) {
  v128_t sumi = wasm_i32x4_splat(0);
#pragma clang loop unroll(disable)
  for (int ht = 0; ht < 4; ++ht) {
    const int h = ht >> 1, t = ht & 1;
    for (int j = 0; j < 4; ++j) {
      const int k = 8 * h + 2 * j + t;
      const v128_t d = dot16(plane(h, t, j), act(k));
      sumi = wasm_i32x4_add(sumi, wasm_i32x4_mul(d, wasm_i32x4_splat(scales[k])));
    }
  }
  return sumi;
}

static inline int iq4_xs_scale(const uint8_t* scales_l, uint16_t scales_h, int ib) {
  return ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
}

}  // namespace ox::kernels::simd128
