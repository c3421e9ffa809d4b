// SIMD128 dot products of the ternary formats TQ1_0 and TQ2_0 against Q8_K: the weights t - 1
// (-1..1; TQ2_0's code 3 gives 2) as signed bytes, widened to even / odd i16 with the activations
// and summed by dot_i16x8, so no sum(a) term. Reference: quant_traits(TQ1_0 / TQ2_0).vec_dot_ref,
// bit for bit: one int per block, its float term added in block order (see kernels/x86/avx2/tq.cpp).
// TQ2_0's decode (gemm_tq2_0, one token) runs the tq2_0_pairs slot (relaxed_slots.h) over all rows.
#include "core/quant/blocks.h"
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// t - 1 for trit k of 16 TQ1_0 bytes (core/quant/tq.cpp), pow3 holding 3^k per u16 lane. wasm has
// no byte multiply: the i16 product's low byte is the even byte's product modulo 256, and the odd
// byte, multiplied alone in the high half, wraps there the same way. The trit, floor(3q / 256),
// is 1 from q = 86 and 2 from q = 171: each compare's all-ones byte is -1.
inline v128_t trit_weights(v128_t bytes, v128_t pow3) {
  const v128_t even = wasm_v128_and(wasm_i16x8_mul(bytes, pow3), wasm_i16x8_splat(0x00FF));
  const v128_t odd = wasm_i16x8_mul(wasm_v128_and(bytes, wasm_i16x8_splat(static_cast<int16_t>(0xFF00))), pow3);
  const v128_t q = wasm_v128_or(even, odd);
  const v128_t ge86 = wasm_u8x16_ge(q, wasm_u8x16_splat(86)), ge171 = wasm_u8x16_ge(q, wasm_u8x16_splat(171));
  return wasm_i8x16_sub(wasm_i8x16_sub(wasm_i8x16_splat(-1), ge86), ge171);
}

// i32x4 partial sums of 16 signed weight bytes times 16 activations.
inline v128_t dot_s8(v128_t w, const int8_t* a) { return dot16(split_s8(w), split_s8(load(a))); }

}  // namespace

template <>
void vec_dot<DType::TQ1_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ1_0* x = static_cast<const BlockTQ1_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
  // qh's four bytes repeated: byte 4k + m (u16 lane 2k or 2k + 1) is element 240 + 4k + m, trit k.
  const v128_t pow3_qh = wasm_i16x8_make(1, 1, 3, 3, 9, 9, 27, 27);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* a = y[i].qs;
    const v128_t b0 = load(x[i].qs), b1 = load(x[i].qs + 16), b2 = load(x[i].qs + 32);
    v128_t sumi = wasm_i32x4_splat(0);
    for (int k = 0; k < 5; ++k) {
      const v128_t p = wasm_i16x8_splat(kPow3[k]);
      // qs[0..31]: element 32k + m; qs[32..47]: element 160 + 16k + m.
      sumi = wasm_i32x4_add(sumi, dot_s8(trit_weights(b0, p), a + 32 * k));
      sumi = wasm_i32x4_add(sumi, dot_s8(trit_weights(b1, p), a + 32 * k + 16));
      sumi = wasm_i32x4_add(sumi, dot_s8(trit_weights(b2, p), a + 160 + 16 * k));
    }
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, 4);
    sumi = wasm_i32x4_add(sumi, dot_s8(trit_weights(wasm_i32x4_splat(static_cast<int32_t>(qh)), pow3_qh), a + 240));
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(sumi));
  }
  *s = sum;
}

template <>
void vec_dot<DType::TQ2_0>(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockTQ2_0* x = static_cast<const BlockTQ2_0*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  const v128_t m2 = wasm_i8x16_splat(3), one = wasm_i8x16_splat(1);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    v128_t sumi = wasm_i32x4_splat(0);
    // qs[32j + m] holds elements 128j + 32l + m at bits 2l..2l+1; 16 bytes (m = 16h..16h+15) at a
    // time. A 16-bit shift is enough: the mask keeps each byte's own two bits.
    for (int jh = 0; jh < 4; ++jh) {
      const int j = jh >> 1, h = jh & 1;
      const v128_t q = load(x[i].qs + 32 * j + 16 * h);
      const int8_t* a = y[i].qs + 128 * j + 16 * h;
      for (int l = 0; l < 4; ++l) {
        const v128_t codes = wasm_v128_and(wasm_u16x8_shr(q, static_cast<uint32_t>(2 * l)), m2);
        sumi = wasm_i32x4_add(sumi, dot_s8(wasm_i8x16_sub(codes, one), a + 32 * l));
      }
    }
    sum += (fp16(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(sumi));
  }
  *s = sum;
}

// One token against rows r and r + pairs: per block sum(code * a) over the activations split by
// split_acts_q8_k (chunk c's even / odd bytes at act[2c], act[2c + 1]), then minus a_sum[i], which
// is the reference's sum((code - 1) * a) exactly. Byte m of the u16 lanes of q holds elements
// 128j + 32l + m (qs[32j + m], bits 2l..2l+1): shifted by 2l (even bytes) or 2l + 8 (odd) and
// masked to 0..3 in i16 lanes. Products are at most 3 * 128; a lane adds 32 of them per block.
static void tq2_0_pairs_simd128(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y,
                                const v128_t* act, const int32_t* a_sum, float* out) {
  const v128_t m3 = wasm_i16x8_splat(3);
  for (int32_t r = 0; r < pairs; ++r) {
    const auto* x0 = reinterpret_cast<const BlockTQ2_0*>(w + static_cast<uint32_t>(r) * w_stride);
    const auto* x1 = reinterpret_cast<const BlockTQ2_0*>(w + static_cast<uint32_t>(r + pairs) * w_stride);
    float sum0 = 0.0f, sum1 = 0.0f;
    for (int32_t i = 0; i < nb; ++i) {
      const v128_t* a = act + 32 * i;
      v128_t p0 = wasm_i16x8_splat(0), p1 = wasm_i16x8_splat(0);
      for (int jh = 0; jh < 4; ++jh) {
        const int j = jh >> 1, h = jh & 1;
        const v128_t q0 = load(x0[i].qs + 16 * jh), q1 = load(x1[i].qs + 16 * jh);
        for (int l = 0; l < 4; ++l) {
          const v128_t* ac = a + 2 * (8 * j + 2 * l + h);
          const uint32_t se = static_cast<uint32_t>(2 * l), so = se + 8;
          p0 = wasm_i16x8_add(p0, wasm_i16x8_add(wasm_i16x8_mul(wasm_v128_and(wasm_u16x8_shr(q0, se), m3), ac[0]),
                                                 wasm_i16x8_mul(wasm_v128_and(wasm_u16x8_shr(q0, so), m3), ac[1])));
          p1 = wasm_i16x8_add(p1, wasm_i16x8_add(wasm_i16x8_mul(wasm_v128_and(wasm_u16x8_shr(q1, se), m3), ac[0]),
                                                 wasm_i16x8_mul(wasm_v128_and(wasm_u16x8_shr(q1, so), m3), ac[1])));
        }
      }
      const int32_t s0 = hsum_i32(wasm_i32x4_extadd_pairwise_i16x8(p0)) - a_sum[i];
      const int32_t s1 = hsum_i32(wasm_i32x4_extadd_pairwise_i16x8(p1)) - a_sum[i];
      sum0 += (fp16(x0[i].d) * y[i].d) * static_cast<float>(s0);
      sum1 += (fp16(x1[i].d) * y[i].d) * static_cast<float>(s1);
    }
    out[r] = sum0;
    out[r + pairs] = sum1;
  }
}

// One token: each block's sum of quants once, then the slot over row pairs (an odd last row by
// vec_dot). More tokens: vec_dot per row and token, each row's blocks reused from cache by every
// token (a pass of the slot per token would stream the matrix once per token).
static void gemm_tq2_0(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens != 1) {
    for (int64_t r = 0; r < n_rows; ++r)
      for (int64_t t = 0; t < n_tokens; ++t)
        vec_dot<DType::TQ2_0>(n, y + t * y_stride + r, w + static_cast<uint64_t>(r) * w_stride, a + static_cast<uint64_t>(t) * a_stride);
    return;
  }
  const int64_t nb = n / kQK_K;
  const BlockQ8_K* yt = reinterpret_cast<const BlockQ8_K*>(a);
  auto* a_sum = reinterpret_cast<int32_t*>(gemm::scratch(gemm::Slot::kScales, (nb + 3) / 4));
  for (int64_t i = 0; i < nb; ++i) {
    v128_t s = wasm_i32x4_splat(0);
    for (int c = 0; c < kQK_K / 16; ++c) s = wasm_i32x4_add(s, wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(load(yt[i].qs + 16 * c))));
    a_sum[i] = hsum_i32(s);
  }
  const v128_t* act = relaxed_active() ? nullptr : gemm::split_acts_q8_k(n, a);
  const int64_t pairs = n_rows / 2;
  tq2_0_pairs(static_cast<int32_t>(nb), w, static_cast<uint32_t>(w_stride), static_cast<int32_t>(pairs), yt, act, a_sum, y);
  if (n_rows % 2 != 0) vec_dot<DType::TQ2_0>(n, y + n_rows - 1, w + static_cast<uint64_t>(n_rows - 1) * w_stride, a);
}

void register_gemm_tq(KernelTable& t) { t.gemm[static_cast<uint32_t>(DType::TQ2_0)] = gemm_tq2_0; }

}  // namespace ox::kernels::simd128

// The SIMD128 body of the tq2_0_pairs slot (relaxed_slots.h); the splice finds it by its plain name.
extern "C" __attribute__((noinline)) void ox_simd128_tq2_0_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                 int32_t pairs, const ox::BlockQ8_K* y,
                                                                 const v128_t* act, const int32_t* a_sum, float* out) {
  ox::kernels::simd128::tq2_0_pairs_simd128(nb, w, w_stride, pairs, y, act, a_sum, out);
}

namespace ox::kernels::simd128 {
// Not const: a pointer the optimizers cannot see through, so the slot stays a function of its own.
Tq2_0PairsFn tq2_0_pairs = ox_simd128_tq2_0_pairs;
}  // namespace ox::kernels::simd128
