// Row-lane tile (gemm) body of the formats with Q8_K activations (K-quants, IQ4_XS and the
// codebook i-quants), templated on the int8 dot primitive; loaders in gemm_kquant_load.h and
// iquant_load.h. Reference: quant_traits(W).vec_dot_ref; the integer sum of each super-block is
// exact, float order differs.
#pragma once

#include <cstddef>

#include "core/quant/blocks.h"
#include "kernels/neon/gemm_kquant_load.h"
#include "kernels/neon/gemm_tile.h"

namespace ox::kernels::neon_common {
namespace {

// The four rows' super-block scales d as float lanes: the fp16 field at Load::kD, or Load::d4
// for a format that keeps d elsewhere (IQ1_M).
template <typename Load>
inline float32x4_t load_d4(const uint8_t* const x[kTileRows]) {
  if constexpr (requires { Load::d4(x); }) {
    return Load::d4(x);
  } else {
    return load_fp16x4(x, Load::kD);
  }
}

// The power of two a format's reference multiplies its float sum by at the end (IQ2 and IQ1
// count eighths of d, IQ3_XXS quarters; see core/quant/reference.h), 1 where it has none.
template <typename Load>
constexpr float dot_factor() {
  if constexpr (requires { Load::kDotFactor; }) {
    return Load::kDotFactor;
  } else {
    return 1.0f;
  }
}

// out[t] = acc[t] * dot_factor<Load>() (exact).
template <typename Load, int T>
inline void finish_tile(const float32x4_t acc[T], float32x4_t out[T]) {
  for (int t = 0; t < T; ++t) out[t] = dot_factor<Load>() == 1.0f ? acc[t] : vmulq_n_f32(acc[t], dot_factor<Load>());
}

// sc[u] lane r = s[r] lane u (four rows' scales per unit, widened to i32).
template <int kUnits>
inline void transpose_scales(const int8x16_t s[kTileRows], int32x4_t sc[kUnits]) {
  const int8x16_t z01[2] = {vzip1q_s8(s[0], s[1]), vzip2q_s8(s[0], s[1])};
  const int8x16_t z23[2] = {vzip1q_s8(s[2], s[3]), vzip2q_s8(s[2], s[3])};
  for (int q = 0; q < kUnits / 4; ++q) {  // bytes 4u'..4u'+3 of v = rows 0..3 of unit 4q + u'
    const int16x8_t a = vreinterpretq_s16_s8(z01[q / 2]), b = vreinterpretq_s16_s8(z23[q / 2]);
    const int8x16_t v = vreinterpretq_s8_s16(q % 2 == 0 ? vzip1q_s16(a, b) : vzip2q_s16(a, b));
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    sc[4 * q + 0] = vmovl_s16(vget_low_s16(lo));
    sc[4 * q + 1] = vmovl_high_s16(lo);
    sc[4 * q + 2] = vmovl_s16(vget_low_s16(hi));
    sc[4 * q + 3] = vmovl_high_s16(hi);
  }
}

// Four rows x T tokens (rows in lanes), decode included (T = 1). Per unit: each row unpacked
// once for the T tokens; per token the four rows' dots are combined (reduce4) and scaled by the
// rows' unit scales (sc[u]) into one i32 vector; per super-block one FMA with d_row * d_token,
// and for formats with mins one with dmin_row * d_token times the bsums min dot.
template <typename Dot, typename Load>
struct KTile {
  int64_t nsb;  // super-blocks per row

  template <int T>
  void run(const uint8_t* const rows[kTileRows], const uint8_t* a, uint64_t a_stride, float32x4_t out[T]) const {
    constexpr int kVecs = Load::kVecs;
    const int32x4_t zero = vdupq_n_s32(0);
    float32x4_t acc[T];
    for (int t = 0; t < T; ++t) acc[t] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < nsb; ++i) {
      const uint8_t* x[kTileRows];
      int8x16_t s[kTileRows];
      for (int r = 0; r < kTileRows; ++r) {
        x[r] = rows[r] + static_cast<uint64_t>(i) * Load::kBytes;
        s[r] = Load::scales(x[r]);
      }
      int32x4_t sc[Load::kUnits];
      transpose_scales<Load::kUnits>(s, sc);
      const uint8_t* ab = a + static_cast<uint64_t>(i) * sizeof(BlockQ8_K);
      int32x4_t sumi[T];
      for (int t = 0; t < T; ++t) sumi[t] = zero;
      auto group = [&](int g) {
        unroll<Load::kPerGroup>([&](auto kc) {
          constexpr int k = decltype(kc)::value;
          const int u = Load::unit(g, k);
          int8x16_t wv[kTileRows][kVecs];
          for (int r = 0; r < kTileRows; ++r) Load::template unpack<k>(x[r], g, wv[r]);
          const uint8_t* aq = ab + offsetof(BlockQ8_K, qs) + 16 * kVecs * u;
          for (int t = 0; t < T; ++t) {
            const int8_t* q = reinterpret_cast<const int8_t*>(aq + t * a_stride);
            int8x16_t av[kVecs];
            for (int v = 0; v < kVecs; ++v) av[v] = vld1q_s8(q + 16 * v);
            int32x4_t d[kTileRows];
            for (int r = 0; r < kTileRows; ++r) {
              d[r] = Dot::dot(zero, wv[r][0], av[0]);
              for (int v = 1; v < kVecs; ++v) d[r] = Dot::dot(d[r], wv[r][v], av[v]);
            }
            sumi[t] = vmlaq_s32(sumi[t], reduce4(d), sc[u]);
          }
        });
      };
      // Unrolled groups make every offset and shift an immediate. Only for one token: with more
      // (or Q5_K's qh planes, kUnrollGroups) the hoisted unpacks no longer fit and spill.
      if constexpr (T == 1 && Load::kUnrollGroups) {
#pragma GCC unroll 8
        for (int g = 0; g < Load::kGroups; ++g) group(g);
      } else {
        for (int g = 0; g < Load::kGroups; ++g) group(g);
      }
      const float32x4_t dw = load_d4<Load>(x);
      for (int t = 0; t < T; ++t) {
        const float dy = load_f32(ab + t * a_stride + offsetof(BlockQ8_K, d));
        acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(sumi[t]), vmulq_n_f32(dw, dy));
      }
      if constexpr (Load::kHasMin) min_terms<T>(x, ab, a_stride, acc);
    }
    finish_tile<Load, T>(acc, out);
  }

  // acc[t] lane r -= dmin_r * d_t * sum_k min_r[k] * bsums_t[k].
  template <int T>
  static void min_terms(const uint8_t* const x[kTileRows], const uint8_t* ab, uint64_t a_stride, float32x4_t acc[T]) {
    int16x8_t mlo[kTileRows], mhi[kTileRows];
    for (int r = 0; r < kTileRows; ++r) Load::mins(x[r], mlo[r], mhi[r]);
    const float32x4_t dmw = load_fp16x4(x, Load::kDmin);
    for (int t = 0; t < T; ++t) {
      const uint8_t* at = ab + t * a_stride;
      const int16_t* bs = reinterpret_cast<const int16_t*>(at + offsetof(BlockQ8_K, bsums));
      const int16x8_t b0 = vld1q_s16(bs), b1 = vld1q_s16(bs + 8);
      int32x4_t m[kTileRows];
      for (int r = 0; r < kTileRows; ++r) {
        int32x4_t v = vmull_s16(vget_low_s16(b0), vget_low_s16(mlo[r]));
        v = vmlal_high_s16(v, b0, mlo[r]);
        v = vmlal_s16(v, vget_low_s16(b1), vget_low_s16(mhi[r]));
        m[r] = vmlal_high_s16(v, b1, mhi[r]);
      }
      const float dy = load_f32(at + offsetof(BlockQ8_K, d));
      acc[t] = vfmsq_f32(acc[t], vcvtq_f32_s32(reduce4(m)), vmulq_n_f32(dmw, dy));
    }
  }
};

// Tokens per tile. Only the i32 unit sums (one vector per token) live across a super-block's
// units; 4 tokens leave room for a unit's 4-8 unpacked weight vectors and the four row dots.
constexpr int kKQuantTokens = 4;

template <typename Dot, typename Load>
void gemm_kquant(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const KTile<Dot, Load> tile{n / kQK_K};
  gemm_tiles<kKQuantTokens>(tile, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace
}  // namespace ox::kernels::neon_common
