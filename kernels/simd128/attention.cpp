// SIMD128 kernels of attention's inner loops (KernelTable::attn_softmax, attn_accumulate). clang
// vectorises neither reference for wasm well: at depth 2048 a decode step of a small model spent
// ~14% of its time in each (the scalar softmax computes one exp at a time, the accumulate loads and
// stores every accumulator once per four positions).
// attn_softmax: ox::attn_softmax_ref's weights bit for bit (the same float operations, exp_bounded
// on four lanes); only its sum adds in another order. attn_accumulate: ox::attn_accumulate_ref
// within float rounding, the accumulators of up to 32 columns held in registers across every
// position. attn_accumulate_rows_f16: attn_accumulate over an F16 cache's rows converted in registers
// (a decode step without grouped heads reads each value once: converting it into a tile first
// stored and loaded every value once more).
#include <wasm_simd128.h>

#include <cstring>

#include "core/base/exp_bounded.h"
#include "kernels/simd128/exp_bounded.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// Lanes of a running maximum folded in lane order, with the reference's comparison.
inline float max_lanes(v128_t m) {
  float r = wasm_f32x4_extract_lane(m, 0);
  for (const float x : {wasm_f32x4_extract_lane(m, 1), wasm_f32x4_extract_lane(m, 2), wasm_f32x4_extract_lane(m, 3)}) {
    r = x > r ? x : r;
  }
  return r;
}

// acc[d0, d0 + 4K) += sum_j w[j] * v[j * v_stride + d], K registers kept across all n positions.
template <int K>
inline void accumulate_block(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n) {
  v128_t a[K];
  for (int k = 0; k < K; ++k) a[k] = load(acc + 4 * k);
  for (int64_t j = 0; j < n; ++j, v += v_stride) {
    const v128_t wj = wasm_f32x4_splat(w[j]);
    for (int k = 0; k < K; ++k) a[k] = wasm_f32x4_add(a[k], wasm_f32x4_mul(wj, load(v + 4 * k)));
  }
  for (int k = 0; k < K; ++k) wasm_v128_store(acc + 4 * k, a[k]);
}

// accumulate_block over fp16 value rows (v: column d0 of row 0, rows row_bytes apart), each eight
// halves converted in registers exactly as to_float_f16 converts them.
template <int K>
inline void accumulate_block_f16(float* acc, const float* w, const uint8_t* v, uint64_t row_bytes, int64_t n,
                                 const Fp16Fast& c) {
  v128_t a[K];
  for (int k = 0; k < K; ++k) a[k] = load(acc + 4 * k);
  for (int64_t j = 0; j < n; ++j, v += row_bytes) {
    const v128_t wj = wasm_f32x4_splat(w[j]);
    if constexpr (K == 1) {
      const v128_t h = wasm_v128_load64_zero(v);
      const v128_t x = c.any_special(h) ? fp16x4_to_f32(wasm_u32x4_extend_low_u16x8(h)) : c.low4(h);
      a[0] = wasm_f32x4_add(a[0], wasm_f32x4_mul(wj, x));
    } else {
      for (int k = 0; k < K; k += 2) {
        const v128_t h = load(v + 8 * k);
        v128_t lo, hi;
        if (c.any_special(h)) {
          lo = fp16x4_to_f32(wasm_u32x4_extend_low_u16x8(h));
          hi = fp16x4_to_f32(wasm_u32x4_extend_high_u16x8(h));
        } else {
          lo = c.low4(h);
          hi = c.high4(h);
        }
        a[k] = wasm_f32x4_add(a[k], wasm_f32x4_mul(wj, lo));
        a[k + 1] = wasm_f32x4_add(a[k + 1], wasm_f32x4_mul(wj, hi));
      }
    }
  }
  for (int k = 0; k < K; ++k) wasm_v128_store(acc + 4 * k, a[k]);
}

}  // namespace

float attn_softmax(float* s, int64_t n, float scale, float* max) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  v128_t vmax = wasm_f32x4_splat(*max);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const v128_t x = wasm_f32x4_mul(load(s + j), vscale);
    wasm_v128_store(s + j, x);
    vmax = wasm_f32x4_pmax(vmax, x);  // vmax < x ? x : vmax: the reference's x > m ? x : m
  }
  float m = max_lanes(vmax);
  for (; j < n; ++j) {
    s[j] *= scale;
    m = s[j] > m ? s[j] : m;
  }
  const v128_t vm = wasm_f32x4_splat(m), floor = wasm_f32x4_splat(-87.0f);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  j = 0;
  for (; j + 4 <= n; j += 4) {
    // pmax(x, floor) = x < floor ? floor : x, the reference's clamp, NaN included.
    const v128_t e = exp_bounded(wasm_f32x4_pmax(wasm_f32x4_sub(load(s + j), vm), floor));
    wasm_v128_store(s + j, e);
    vsum = wasm_f32x4_add(vsum, e);
  }
  float sum = hsum_f32(vsum);
  for (; j < n; ++j) {
    const float x = s[j] - m;
    s[j] = ox::exp_bounded(x < -87.0f ? -87.0f : x);
    sum += s[j];
  }
  *max = m;
  return sum;
}

void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  int64_t d = 0;
  for (; d + 32 <= dv; d += 32) accumulate_block<8>(acc + d, w, v + d, v_stride, n);
  for (; d + 16 <= dv; d += 16) accumulate_block<4>(acc + d, w, v + d, v_stride, n);
  for (; d + 4 <= dv; d += 4) accumulate_block<1>(acc + d, w, v + d, v_stride, n);
  if (d < dv) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t k = d; k < dv; ++k) acc[k] += w[j] * v[j * v_stride + k];
    }
  }
}

void attn_accumulate_rows_f16(float* acc, const float* w, const uint8_t* v, uint64_t v_row_bytes, int64_t n,
                              int64_t dv) {
  const Fp16Fast c = fp16_fast_consts();
  int64_t d = 0;  // the column blocks of attn_accumulate
  for (; d + 32 <= dv; d += 32) accumulate_block_f16<8>(acc + d, w, v + 2 * d, v_row_bytes, n, c);
  for (; d + 16 <= dv; d += 16) accumulate_block_f16<4>(acc + d, w, v + 2 * d, v_row_bytes, n, c);
  for (; d + 4 <= dv; d += 4) accumulate_block_f16<1>(acc + d, w, v + 2 * d, v_row_bytes, n, c);
  if (d < dv) {
    for (int64_t j = 0; j < n; ++j) {
      const uint8_t* row = v + j * v_row_bytes;
      for (int64_t k = d; k < dv; ++k) {
        uint16_t h;
        std::memcpy(&h, row + 2 * k, 2);
        acc[k] += w[j] * fp16(h);
      }
    }
  }
}

}  // namespace ox::kernels::simd128
