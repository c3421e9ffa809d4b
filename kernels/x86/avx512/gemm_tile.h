// The AVX-512 tile (gemm) driver: as the AVX2 one (kernels/x86/avx2/gemm_tile.h) with 16-row
// panels, one i32 / f32 lane per row of a zmm register, so one vpdpbusd does 4 exact u8 x s8
// multiply-adds into i32 for each of 16 rows; the panels are two AVX2 8-row loads side by side.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512::tile {

constexpr int kPanelRows = 16;

// Rows 0-7 in the low half, 8-15 in the high half.
static inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
static inline __m512 join(__m256 lo, __m256 hi) {
  return _mm512_castsi512_ps(join(_mm256_castps_si256(lo), _mm256_castps_si256(hi)));
}

static inline __m512i bcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Eight-row loads of both halves joined: `load(half_rows, out8)` fills n vectors per half.
template <int N, typename Load>
static inline void load16(Load load, __m512i out[N]) {
  __m256i lo[N], hi[N];
  load(0, lo);
  load(8, hi);
  for (int k = 0; k < N; ++k) out[k] = join(lo[k], hi[k]);
}

// fp16 at `offset` into each of the 16 rows' blocks, as floats.
static inline __m512 gather_halves16(const uint8_t* const blk[16], uint64_t offset) {
  return join(avx2::tile::gather_halves(blk, offset), avx2::tile::gather_halves(blk + 8, offset));
}

// 16 rows of 32 bytes, `stride` bytes apart, transposed by dwords: q[k] lane r = bytes 4k..4k+3 of
// row r. Rows r and r + 8 share a register (low / high half) through the in-lane steps of the 8x8
// dword transpose; the last step gathers 128-bit lanes across both halves.
static inline void transpose16(const int8_t* src, uint64_t stride, __m512i q[8]) {
  __m512i v[8], t[8], u[8];
  for (int r = 0; r < 8; ++r) v[r] = join(load256(src + r * stride), load256(src + (r + 8) * stride));
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // u[k] holds dword k | k + 4 of rows 0-3 in 128-bit lanes 0 | 1 and of rows 8-11 in lanes 2 | 3;
  // u[4 + k] the same of rows 4-7 and 12-15. One two-source qword permute puts rows in order.
  const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm512_permutex2var_epi64(u[k], lo, u[4 + k]);
    q[4 + k] = _mm512_permutex2var_epi64(u[k], hi, u[4 + k]);
  }
}

// Writes (first chunk) or adds (later chunks) one token's 16 row results, `rows` of them real.
static inline void store_rows(float* y, __m512 v, int rows, bool first) {
  if (rows == kPanelRows) {
    _mm512_storeu_ps(y, first ? v : _mm512_add_ps(_mm512_loadu_ps(y), v));
    return;
  }
  alignas(64) float lanes[kPanelRows];
  _mm512_store_ps(lanes, v);
  for (int r = 0; r < rows; ++r) y[r] = first ? lanes[r] : y[r] + lanes[r];
}

// One token's 16 row results as `store_rows` left them (`rows` real, the other lanes zero).
static inline __m512 load_rows(const float* y, int rows) {
  if (rows == kPanelRows) return _mm512_loadu_ps(y);
  alignas(64) float lanes[kPanelRows] = {};
  for (int r = 0; r < rows; ++r) lanes[r] = y[r];
  return _mm512_load_ps(lanes);
}

// The driver. A format F supplies kBlockElems, kWBlockBytes, kABlockBytes, kChunk, kTokens (<= 8),
// Panel (one packed block of 16 rows), Tok (per-token data of a chunk), and
//   pack(Panel*, const uint8_t* const rows[16], kc)    rows[r] = row r's first block of the chunk
//   prep(Tok*, const uint8_t* act, kc)                  act = the token's first block of the chunk
//   run<T>(const Panel*, const uint8_t* const act[T], const Tok* const tok[T], kc, __m512 acc[T])
// and optionally kSumsInBlockOrder (kernels/x86/avx2/gemm_tile.h): each chunk's tile then starts
// from the sums the previous chunk stored, vec_dot's order of float additions.
template <class F, int T>
static inline void run_tile(const typename F::Panel* panel, const typename F::Tok* toks, int64_t kc,
                            const uint8_t* const act[], float* y, int64_t y_stride, int rows, bool first) {
  const typename F::Tok* tok[T];
  for (int t = 0; t < T; ++t) tok[t] = &toks[t];
  constexpr bool kCarry = avx2::tile::kSumsInBlockOrder<F>;
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = kCarry && !first ? load_rows(y + t * y_stride, rows) : _mm512_setzero_ps();
  F::template run<T>(panel, act, tok, kc, acc);
  for (int t = 0; t < T; ++t) store_rows(y + t * y_stride, acc[t], rows, first || kCarry);
}

template <class F>
void gemm_panels(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  static_assert(F::kTokens >= 1 && F::kTokens <= 8, "register tile");
  constexpr int K = F::kTokens;
  const int64_t nb = n / F::kBlockElems;
  alignas(64) typename F::Panel panel[F::kChunk];
  alignas(64) typename F::Tok tok[K];
  for (int64_t r0 = 0; r0 < n_rows; r0 += kPanelRows) {
    const int rows_real = static_cast<int>(std::min<int64_t>(kPanelRows, n_rows - r0));
    for (int64_t b0 = 0; b0 < nb; b0 += F::kChunk) {
      const int64_t kc = std::min<int64_t>(F::kChunk, nb - b0);
      const uint8_t* rows[kPanelRows];
      for (int r = 0; r < kPanelRows; ++r) {
        // Rows past the matrix repeat its first row: valid memory, results never stored.
        const int64_t row = r < rows_real ? r0 + r : r0;
        rows[r] = w + static_cast<uint64_t>(row) * w_stride + static_cast<uint64_t>(b0) * F::kWBlockBytes;
      }
      F::pack(panel, rows, kc);
      for (int64_t t0 = 0; t0 < n_tokens; t0 += K) {
        const int tt = static_cast<int>(std::min<int64_t>(K, n_tokens - t0));
        const uint8_t* act[8];
        for (int t = 0; t < tt; ++t) {
          act[t] = a + static_cast<uint64_t>(t0 + t) * a_stride + static_cast<uint64_t>(b0) * F::kABlockBytes;
          F::prep(&tok[t], act[t], kc);
        }
        float* yt = y + t0 * y_stride + r0;
        const bool first = b0 == 0;
        switch (tt) {
          case 1: run_tile<F, 1>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 2: run_tile<F, (K >= 2 ? 2 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 3: run_tile<F, (K >= 3 ? 3 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 4: run_tile<F, (K >= 4 ? 4 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 5: run_tile<F, (K >= 5 ? 5 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 6: run_tile<F, (K >= 6 ? 6 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          case 7: run_tile<F, (K >= 7 ? 7 : 1)>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
          default: run_tile<F, K>(panel, tok, kc, act, yt, y_stride, rows_real, first); break;
        }
      }
    }
  }
}

// The entry point of a super-block format: gemm_panels from kMinPanelTokens tokens on, else the
// AVX2 driver's row-by-row dots.
template <class F, VecDotFn kDot, int64_t kMinPanelTokens = 4>
void gemm_or_dots(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                  int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens < kMinPanelTokens) {
    const uint64_t row_bytes = static_cast<uint64_t>(n / F::kBlockElems) * F::kWBlockBytes;
    avx2::tile::dots_by_row<kDot>(n, row_bytes, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  gemm_panels<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace ox::kernels::avx512::tile
