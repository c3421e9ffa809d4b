// Prefill tiles for SDOT by element (vdotq_laneq_s32), tokens in lanes, for whole groups of 4
// tokens; fewer tokens (decode included) take the row-lane tiles of gemm_tile.h. Reference:
// quant_traits(W).vec_dot_ref; integer block / super-block sums exact, float order differs.

// Four tokens' activations are transposed so that lane t of a vector holds 4 consecutive quants
// of token t; one SDOT multiplies them with one 4-quant group of a weight row (the indexed
// operand): 1 row x 4 tokens x 4 quants, and each row's block dot comes out with tokens in
// lanes, with no reduction afterwards.
#pragma once

#include <arm_neon.h>

#include "kernels/neon/gemm_block32_impl.h"
#include "kernels/neon/dotprod/sdot.h"
#include "kernels/neon/gemm_kquant_impl.h"

namespace ox::kernels::neon_dotprod {
namespace {

using neon_common::kTileRows;
using neon_common::load_fp16x4;

// Rows per prefill tile: each transposed activation block serves 8 rows.
constexpr int kLaneRows = 8;
// Tokens per prefill tile: the four lanes.
constexpr int kLaneTokens = 4;

// 4x4 transpose of 32-bit lanes: out[j] lane t = in[t] lane j.
inline void transpose4(const int32x4_t in[4], int32x4_t out[4]) {
  const int32x4_t t01l = vtrn1q_s32(in[0], in[1]), t01h = vtrn2q_s32(in[0], in[1]);
  const int32x4_t t23l = vtrn1q_s32(in[2], in[3]), t23h = vtrn2q_s32(in[2], in[3]);
  auto lo64 = [](int32x4_t a, int32x4_t b) {
    return vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(a), vreinterpretq_s64_s32(b)));
  };
  auto hi64 = [](int32x4_t a, int32x4_t b) {
    return vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(a), vreinterpretq_s64_s32(b)));
  };
  out[0] = lo64(t01l, t23l);
  out[1] = lo64(t01h, t23h);
  out[2] = hi64(t01l, t23l);
  out[3] = hi64(t01h, t23h);
}

// 16 quants at byte `off` of each token's block: out[j] lane t = quants 4j..4j+3 of token t.
inline void transpose_quants(const uint8_t* const at[kLaneTokens], uint64_t off, int8x16_t out[4]) {
  int32x4_t in[4], tr[4];
  for (int t = 0; t < kLaneTokens; ++t) in[t] = vreinterpretq_s32_u8(vld1q_u8(at[t] + off));
  transpose4(in, tr);
  for (int j = 0; j < 4; ++j) out[j] = vreinterpretq_s8_s32(tr[j]);
}

// acc + the dot of 16 weights w with the 16 quants of 4 tokens in A[0..3] (tokens in lanes).
inline int32x4_t dot16(int32x4_t acc, const int8x16_t A[4], int8x16_t w) {
  acc = vdotq_laneq_s32(acc, A[0], w, 0);
  acc = vdotq_laneq_s32(acc, A[1], w, 1);
  acc = vdotq_laneq_s32(acc, A[2], w, 2);
  return vdotq_laneq_s32(acc, A[3], w, 3);
}

// Calls fn(row r, lane) for the R rows, lane = r % 4 as an immediate.
template <int R, typename Fn>
inline void for_rows(Fn&& fn) {
  neon_common::unroll<R>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    fn(r, std::integral_constant<int, r % 4>{});
  });
}

// R rows x 4 tokens of a 32-element block format: out[r] lane t = row r . token t.
template <typename Load, int R>
struct Block32LaneTile {
  static constexpr int kRows = R;
  int64_t nb;

  void run(const uint8_t* const rows[R], const uint8_t* a, uint64_t a_stride, float32x4_t out[R]) const {
    using Act = typename Load::Act;
    float32x4_t acc[R];
    for (int r = 0; r < R; ++r) acc[r] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* at[kLaneTokens];
      for (int t = 0; t < kLaneTokens; ++t) at[t] = a + t * a_stride + static_cast<uint64_t>(i) * sizeof(Act);
      int8x16_t A[8];  // quants 0..15, then 16..31
      transpose_quants(at, offsetof(Act, qs), A);
      transpose_quants(at, offsetof(Act, qs) + 16, A + 4);
      const float32x4_t dy = load_fp16x4(at, offsetof(Act, d));
      float32x4_t sy = dy;  // Q8_1's s = d * sum(q), for the m terms
      if constexpr (Load::kHasMin) sy = load_fp16x4(at, offsetof(BlockQ8_1, s));
      float32x4_t dw[R / 4], mw[R / 4];
      const uint8_t* x[R];
      for (int g = 0; g < R / 4; ++g) {
        for (int r = 0; r < 4; ++r) x[4 * g + r] = rows[4 * g + r] + static_cast<uint64_t>(i) * Load::kBytes;
        dw[g] = load_fp16x4(x + 4 * g, Load::kD);
        if constexpr (Load::kHasMin) mw[g] = load_fp16x4(x + 4 * g, Load::kM);
      }
      for_rows<R>([&](int r, auto lane) {
        int8x16_t lo, hi;
        Load::unpack(x[r], lo, hi);
        const int32x4_t d = dot16(dot16(vdupq_n_s32(0), A, lo), A + 4, hi);
        acc[r] = vfmaq_f32(acc[r], vcvtq_f32_s32(d), vmulq_laneq_f32(dy, dw[r / 4], lane));
        if constexpr (Load::kHasMin) {
          acc[r] = vfmaq_laneq_f32(acc[r], sy, mw[r / 4], lane);
        }
      });
    }
    for (int r = 0; r < R; ++r) out[r] = acc[r];
  }
};

// The bsums of four tokens' super-blocks, tokens in lanes: lanes 4j..4j+3 of out[k / 2] hold
// term k (bsums k for 16 min lanes; bsums 2k + 2k+1 for 8).
template <int kMinTerms>
inline void transpose_bsums(const uint8_t* const at[kLaneTokens], int16x8_t out[kMinTerms / 2]) {
  int16x8_t p[kLaneTokens][kMinTerms / 8];
  for (int t = 0; t < kLaneTokens; ++t) {
    const int16_t* bs = reinterpret_cast<const int16_t*>(at[t] + offsetof(BlockQ8_K, bsums));
    const int16x8_t b0 = vld1q_s16(bs), b1 = vld1q_s16(bs + 8);
    if constexpr (kMinTerms == 8) {
      p[t][0] = vpaddq_s16(b0, b1);  // |sum of 32 quants| <= 4064
    } else {
      p[t][0] = b0;
      p[t][1] = b1;
    }
  }
  for (int h = 0; h < kMinTerms / 8; ++h) {
    const int32x4_t z01l = vreinterpretq_s32_s16(vzip1q_s16(p[0][h], p[1][h]));
    const int32x4_t z01h = vreinterpretq_s32_s16(vzip2q_s16(p[0][h], p[1][h]));
    const int32x4_t z23l = vreinterpretq_s32_s16(vzip1q_s16(p[2][h], p[3][h]));
    const int32x4_t z23h = vreinterpretq_s32_s16(vzip2q_s16(p[2][h], p[3][h]));
    out[4 * h + 0] = vreinterpretq_s16_s32(vzip1q_s32(z01l, z23l));  // terms 8h + 0, 1
    out[4 * h + 1] = vreinterpretq_s16_s32(vzip2q_s32(z01l, z23l));  // 8h + 2, 3
    out[4 * h + 2] = vreinterpretq_s16_s32(vzip1q_s32(z01h, z23h));  // 8h + 4, 5
    out[4 * h + 3] = vreinterpretq_s16_s32(vzip2q_s32(z01h, z23h));  // 8h + 6, 7
  }
}

// sum_k m[k] * B_k, tokens in lanes, for the 8 min terms k of one int16x8 of mins.
inline int32x4_t min_dot8(int32x4_t acc, const int16x8_t B[4], int16x8_t m) {
  acc = vmlal_laneq_s16(acc, vget_low_s16(B[0]), m, 0);
  acc = vmlal_laneq_s16(acc, vget_high_s16(B[0]), m, 1);
  acc = vmlal_laneq_s16(acc, vget_low_s16(B[1]), m, 2);
  acc = vmlal_laneq_s16(acc, vget_high_s16(B[1]), m, 3);
  acc = vmlal_laneq_s16(acc, vget_low_s16(B[2]), m, 4);
  acc = vmlal_laneq_s16(acc, vget_high_s16(B[2]), m, 5);
  acc = vmlal_laneq_s16(acc, vget_low_s16(B[3]), m, 6);
  return vmlal_laneq_s16(acc, vget_high_s16(B[3]), m, 7);
}

// R rows x 4 tokens of a format with Q8_K activations (K-quant, IQ4_XS, codebook i-quant): per
// unit, the 4 tokens' quants are transposed once and serve all R rows; each row's unit dot
// (tokens in lanes) is scaled by the row's unit scale (a lane of the transposed scales) into an
// i32 sum per row.
template <typename Load, int R>
struct KLaneTile {
  static constexpr int kRows = R;
  int64_t nsb;

  void run(const uint8_t* const rows[R], const uint8_t* a, uint64_t a_stride, float32x4_t out[R]) const {
    constexpr int kVecs = Load::kVecs;
    float32x4_t acc[R];
    for (int r = 0; r < R; ++r) acc[r] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < nsb; ++i) {
      const uint8_t* at[kLaneTokens];
      for (int t = 0; t < kLaneTokens; ++t) at[t] = a + t * a_stride + static_cast<uint64_t>(i) * sizeof(BlockQ8_K);
      const uint8_t* x[R];
      int32x4_t sc[R / 4][Load::kUnits];  // sc[g][u] lane r = scale of unit u in row 4g + r
      for (int g = 0; g < R / 4; ++g) {
        int8x16_t s[kTileRows];
        for (int r = 0; r < 4; ++r) {
          x[4 * g + r] = rows[4 * g + r] + static_cast<uint64_t>(i) * Load::kBytes;
          s[r] = Load::scales(x[4 * g + r]);
        }
        neon_common::transpose_scales<Load::kUnits>(s, sc[g]);
      }
      int32x4_t sumi[R];
      for (int r = 0; r < R; ++r) sumi[r] = vdupq_n_s32(0);
      for (int g = 0; g < Load::kGroups; ++g) {
        neon_common::unroll<Load::kPerGroup>([&](auto kc) {
          constexpr int k = decltype(kc)::value;
          const int u = Load::unit(g, k);
          int8x16_t A[4 * kVecs];
          for (int v = 0; v < kVecs; ++v) {
            transpose_quants(at, offsetof(BlockQ8_K, qs) + 16 * (kVecs * u + v), A + 4 * v);
          }
          for_rows<R>([&](int r, auto lane) {
            int8x16_t w[kVecs];
            Load::template unpack<k>(x[r], g, w);
            int32x4_t d = dot16(vdupq_n_s32(0), A, w[0]);
            for (int v = 1; v < kVecs; ++v) d = dot16(d, A + 4 * v, w[v]);
            sumi[r] = vmlaq_laneq_s32(sumi[r], d, sc[r / 4][u], lane);
          });
        });
      }
      float32x4_t dy = vdupq_n_f32(neon_common::load_f32(at[0] + offsetof(BlockQ8_K, d)));
      dy = vsetq_lane_f32(neon_common::load_f32(at[1] + offsetof(BlockQ8_K, d)), dy, 1);
      dy = vsetq_lane_f32(neon_common::load_f32(at[2] + offsetof(BlockQ8_K, d)), dy, 2);
      dy = vsetq_lane_f32(neon_common::load_f32(at[3] + offsetof(BlockQ8_K, d)), dy, 3);
      float32x4_t dw[R / 4];
      for (int g = 0; g < R / 4; ++g) dw[g] = neon_common::load_d4<Load>(x + 4 * g);
      for_rows<R>([&](int r, auto lane) {
        acc[r] = vfmaq_f32(acc[r], vcvtq_f32_s32(sumi[r]), vmulq_laneq_f32(dy, dw[r / 4], lane));
      });
      if constexpr (Load::kHasMin) min_terms(x, at, dy, acc);
    }
    neon_common::finish_tile<Load, R>(acc, out);
  }

  // acc[r] lane t -= dmin_r * d_t * sum_k min_r[k] * bsums term k of token t.
  static void min_terms(const uint8_t* const x[R], const uint8_t* const at[kLaneTokens], float32x4_t dy,
                        float32x4_t acc[R]) {
    constexpr int kTerms = Load::kMinTerms;
    int16x8_t B[kTerms / 2];
    transpose_bsums<kTerms>(at, B);
    float32x4_t dmw[R / 4];
    for (int g = 0; g < R / 4; ++g) dmw[g] = load_fp16x4(x + 4 * g, Load::kDmin);
    for_rows<R>([&](int r, auto lane) {
      int16x8_t m[2];
      Load::min_terms(x[r], m);
      int32x4_t md = min_dot8(vdupq_n_s32(0), B, m[0]);
      if constexpr (kTerms == 16) md = min_dot8(md, B + 4, m[1]);
      acc[r] = vfmsq_f32(acc[r], vcvtq_f32_s32(md), vmulq_laneq_f32(dy, dmw[r / 4], lane));
    });
  }
};

// out[r] lane t (rows in vectors, tokens in lanes) -> y[t * y_stride + r] for r < nr, 4 tokens.
template <int R>
inline void store_lanes(const float32x4_t out[R], int nr, float* y, int64_t y_stride) {
  for (int g = 0; g < R / 4 && 4 * g < nr; ++g) {
    int32x4_t in[4], tr[4];
    for (int r = 0; r < 4; ++r) in[r] = vreinterpretq_s32_f32(out[4 * g + r]);
    transpose4(in, tr);
    float32x4_t by_token[kLaneTokens];
    for (int t = 0; t < kLaneTokens; ++t) by_token[t] = vreinterpretq_f32_s32(tr[t]);
    neon_common::store_tile<kLaneTokens>(by_token, nr - 4 * g < 4 ? nr - 4 * g : 4, y + 4 * g, y_stride);
  }
}

// The GemmFn contract with the lane tiles for whole groups of 4 tokens (8-row tiles, then
// 4-row ones for the last rows, a short group repeating its last row) and the row-lane tiles
// of gemm_tile.h (narrow) for the 1-3 tokens left over, decode included.
template <typename Wide8, typename Wide4, typename Narrow>
inline void gemm_lanes(const Wide8& wide8, const Wide4& wide4, const Narrow& narrow, const uint8_t* w,
                       uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride, int64_t n_tokens,
                       float* y, int64_t y_stride) {
  const int64_t n_wide = n_tokens / kLaneTokens * kLaneTokens;
  auto wide = [&](const auto& tile, auto rows_c, int64_t r0, int nr) {
    constexpr int R = decltype(rows_c)::value;
    const uint8_t* rows[R];
    for (int k = 0; k < R; ++k) rows[k] = w + static_cast<uint64_t>(r0 + (k < nr ? k : nr - 1)) * w_stride;
    for (int64_t t0 = 0; t0 < n_wide; t0 += kLaneTokens) {
      float32x4_t out[R];
      tile.run(rows, a + static_cast<uint64_t>(t0) * a_stride, a_stride, out);
      store_lanes<R>(out, nr, y + t0 * y_stride + r0, y_stride);
    }
  };
  int64_t r0 = 0;
  if (n_wide > 0) {
    for (; r0 + Wide8::kRows <= n_rows; r0 += Wide8::kRows) {
      wide(wide8, std::integral_constant<int, Wide8::kRows>{}, r0, Wide8::kRows);
    }
    for (; r0 < n_rows; r0 += 4) {
      wide(wide4, std::integral_constant<int, 4>{}, r0, n_rows - r0 < 4 ? static_cast<int>(n_rows - r0) : 4);
    }
  }
  if (n_wide < n_tokens) {
    neon_common::gemm_tiles<2>(narrow, w, w_stride, n_rows, a + static_cast<uint64_t>(n_wide) * a_stride, a_stride,
                               n_tokens - n_wide, y + n_wide * y_stride, y_stride);
  }
}

// The GemmFn of a format with Q8_K activations, over its loader: KLaneTile for groups of 4
// tokens, the row-lane KTile (with SDOT) for the rest.
template <typename Load>
void gemm_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
               int64_t n_tokens, float* y, int64_t ys) {
  const int64_t nsb = n / kQK_K;
  gemm_lanes(KLaneTile<Load, kLaneRows>{nsb}, KLaneTile<Load, 4>{nsb}, neon_common::KTile<DotSdot, Load>{nsb}, w,
             ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace
}  // namespace ox::kernels::neon_dotprod
