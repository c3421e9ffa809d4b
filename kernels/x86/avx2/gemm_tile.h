// The AVX2 tile (gemm) driver shared by every format: weights are repacked per chunk of blocks
// into 8-row panels (one i32 / f32 lane per row), activations are broadcast 4 bytes at a time,
// so one vpmaddubsw does 4 multiply-adds for each of 8 rows and no horizontal sums are needed.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2::tile {

constexpr int kPanelRows = 8;
constexpr int kGroupRows = 16;  // rows packed together, so each token's activations load once for both panels

static inline __m256i load_aligned(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }

// An empty asm the value must pass through: keeps GCC from re-associating an accumulation chain
// into a tree (which holds every partial product live at once and spills the register tile).
static inline __m256i chain(__m256i v) {
#if defined(__AVX2__)  // (the AVX-512 sources also compile under SIMDe emulation, where it is moot)
  __asm__("" : "+x"(v));
#endif
  return v;
}

// 4 activation bytes at p broadcast to every dword lane (one vpbroadcastd from memory).
static inline __m256i bcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Dword k of the 8 rows (row r in lane r): an 8x8 transpose of 32-bit elements, row[r] holding
// row r's 32 bytes. Afterwards out[k] lane r = bytes 4k..4k+3 of row r.
static inline void transpose8x8(const __m256i row[8], __m256i out[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(row[2 * i], row[2 * i + 1]);      // dwords 0,1 | 4,5
    t[2 * i + 1] = _mm256_unpackhi_epi32(row[2 * i], row[2 * i + 1]);  // dwords 2,3 | 6,7
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);      // dword 0 | 4 of 4 rows
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);      // 1 | 5
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);  // 2 | 6
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);  // 3 | 7
  }
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    out[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

// Dword k (k < 4) of 16-byte pieces of 8 rows: out[k] lane r = bytes 4k..4k+3 at src[r].
static inline void transpose8x4(const uint8_t* const src[8], __m256i out[4]) {
  __m256i p[4];
  for (int i = 0; i < 4; ++i) p[i] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(src[i + 4]),
                                                          reinterpret_cast<const __m128i*>(src[i]));
  const __m256i t0 = _mm256_unpacklo_epi32(p[0], p[1]), t1 = _mm256_unpackhi_epi32(p[0], p[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(p[2], p[3]), t3 = _mm256_unpackhi_epi32(p[2], p[3]);
  out[0] = _mm256_unpacklo_epi64(t0, t2);
  out[1] = _mm256_unpackhi_epi64(t0, t2);
  out[2] = _mm256_unpacklo_epi64(t1, t3);
  out[3] = _mm256_unpackhi_epi64(t1, t3);
}

// Eight fp16 values, one per row at byte `offset` of each row's block, as 8 floats. Assembled
// in general registers: eight 2-byte stores read back as one vector would miss store forwarding.
static inline __m256 gather_halves(const uint8_t* const src[8], uint64_t offset) {
  uint64_t q[2];
  for (int i = 0; i < 2; ++i) {
    uint64_t v = 0;
    for (int j = 0; j < 4; ++j) {
      uint16_t h;
      std::memcpy(&h, src[4 * i + j] + offset, 2);
      v |= static_cast<uint64_t>(h) << (16 * j);
    }
    q[i] = v;
  }
  return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<int64_t>(q[1]), static_cast<int64_t>(q[0])));
}

// The fp16 at the start of 8 blocks: rows 0-3 from w0 + r * stride, rows 4-7 from w4 + r * stride
// (two bases and three multiples of the stride, which the compiler keeps in registers).
static inline __m256 gather_halves_strided(const uint8_t* w0, const uint8_t* w4, uint64_t stride) {
  auto h = [&](const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return static_cast<int>(v);
  };
  __m128i v = _mm_cvtsi32_si128(h(w0));
  v = _mm_insert_epi16(v, h(w0 + stride), 1);
  v = _mm_insert_epi16(v, h(w0 + 2 * stride), 2);
  v = _mm_insert_epi16(v, h(w0 + 3 * stride), 3);
  v = _mm_insert_epi16(v, h(w4), 4);
  v = _mm_insert_epi16(v, h(w4 + stride), 5);
  v = _mm_insert_epi16(v, h(w4 + 2 * stride), 6);
  v = _mm_insert_epi16(v, h(w4 + 3 * stride), 7);
  return _mm256_cvtph_ps(v);
}

// `count` fp16 values `stride` bytes apart as floats (token scales of a chunk).
static inline void halves_to_floats(const uint8_t* src, uint64_t stride, int64_t count, float* out) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const uint8_t* p[8];
    for (int j = 0; j < 8; ++j) p[j] = src + (i + j) * stride;
    _mm256_storeu_ps(out + i, gather_halves(p, 0));
  }
  for (; i < count; ++i) {
    uint16_t h;
    std::memcpy(&h, src + i * stride, 2);
    out[i] = fp16(h);
  }
}

// Writes (first chunk) or adds (later chunks) one token's 8 row results, of which `rows` are real.
static inline void store_rows(float* y, __m256 v, int rows, bool first) {
  if (rows == kPanelRows) {
    _mm256_storeu_ps(y, first ? v : _mm256_add_ps(_mm256_loadu_ps(y), v));
    return;
  }
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  if (!first) v = _mm256_add_ps(_mm256_maskload_ps(y, mask), v);
  _mm256_maskstore_ps(y, mask, v);
}

// One token's 8 row results as `store_rows` left them (`rows` real, the other lanes zero).
static inline __m256 load_rows(const float* y, int rows) {
  if (rows == kPanelRows) return _mm256_loadu_ps(y);
  return _mm256_maskload_ps(y, _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

// A format whose tiles promise vec_dot's bits (F::kSumsInBlockOrder, the ternary formats) adds
// every block's term to one running sum per cell, as vec_dot does: each chunk's tile starts from
// the sums the previous chunk stored instead of adding a chunk sum to them (another rounding).
template <class F>
constexpr bool kSumsInBlockOrder = requires { requires F::kSumsInBlockOrder; };

// The driver. A format F supplies:
//   kBlockElems, kWBlockBytes, kABlockBytes     element count and byte sizes of one weight / activation block
//   kChunk                                      blocks per packed chunk
//   kTokens1, kTokens2                          tokens per register tile with one / two panels (<= 6)
//   Panel                                       one packed block of 8 rows
//   Tok                                         per-token data prepared once per chunk
//   pack(Panel*, const uint8_t* const rows[8], kc)   rows[r] = row r's first block of the chunk
//   prep(Tok*, const uint8_t* act, kc)               act = the token's first block of the chunk
//   run<P, T>(const Panel* const panel[P], const uint8_t* const act[T], const Tok* const tok[T], kc,
//             __m256 acc[P * T])                     acc[p * T + t] += panel p's 8 rows . token t
//   optionally kSumsInBlockOrder (above)
// Two panels per tile share every activation broadcast between 16 rows.
template <class F>
struct Scratch {
  alignas(64) typename F::Panel panel[kGroupRows / kPanelRows][F::kChunk];
  alignas(64) typename F::Tok tok[6];
};

template <class F, int P, int T>
static inline void run_tile(const Scratch<F>& s, int p0, int64_t kc, const uint8_t* const act[], float* y, int64_t y_stride,
                            int64_t rows_left, bool first) {
  const typename F::Tok* tok[T];
  for (int t = 0; t < T; ++t) tok[t] = &s.tok[t];
  const typename F::Panel* panel[P];
  for (int p = 0; p < P; ++p) panel[p] = s.panel[p0 + p];
  constexpr bool kCarry = kSumsInBlockOrder<F>;
  int rows[P];
  for (int p = 0; p < P; ++p) rows[p] = static_cast<int>(std::min<int64_t>(kPanelRows, rows_left - kPanelRows * p));
  __m256 acc[P * T];
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) {
      acc[p * T + t] = kCarry && !first ? load_rows(y + t * y_stride + kPanelRows * p, rows[p]) : _mm256_setzero_ps();
    }
  }
  F::template run<P, T>(panel, act, tok, kc, acc);
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) {
      store_rows(y + t * y_stride + kPanelRows * p, acc[p * T + t], rows[p], first || kCarry);
    }
  }
}

// One tile of `tt` tokens (1 <= tt <= kTokens of P panels): the matching instantiation.
template <class F, int P>
static inline void run_tokens(int tt, const Scratch<F>& s, int p0, int64_t kc, const uint8_t* const act[], float* y,
                              int64_t y_stride, int64_t rows_left, bool first) {
  constexpr int kMax = P == 1 ? F::kTokens1 : F::kTokens2;
  switch (tt) {
    case 1: run_tile<F, P, 1>(s, p0, kc, act, y, y_stride, rows_left, first); break;
    case 2: run_tile<F, P, (kMax >= 2 ? 2 : 1)>(s, p0, kc, act, y, y_stride, rows_left, first); break;
    case 3: run_tile<F, P, (kMax >= 3 ? 3 : 1)>(s, p0, kc, act, y, y_stride, rows_left, first); break;
    case 4: run_tile<F, P, (kMax >= 4 ? 4 : 1)>(s, p0, kc, act, y, y_stride, rows_left, first); break;
    case 5: run_tile<F, P, (kMax >= 5 ? 5 : 1)>(s, p0, kc, act, y, y_stride, rows_left, first); break;
    default: run_tile<F, P, kMax>(s, p0, kc, act, y, y_stride, rows_left, first); break;
  }
}

template <class F>
void gemm_panels(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  static_assert(F::kTokens1 >= 1 && F::kTokens1 <= 6 && F::kTokens2 >= 1 && F::kTokens2 <= 6, "register tile");
  const int64_t nb = n / F::kBlockElems;
  Scratch<F> s;
  for (int64_t r0 = 0; r0 < n_rows; r0 += kGroupRows) {
    const int64_t rows_left = std::min<int64_t>(kGroupRows, n_rows - r0);
    const int n_panels = rows_left > kPanelRows ? 2 : 1;
    const int64_t tile_tokens = n_panels == 2 ? F::kTokens2 : F::kTokens1;
    for (int64_t b0 = 0; b0 < nb; b0 += F::kChunk) {
      const int64_t kc = std::min<int64_t>(F::kChunk, nb - b0);
      for (int p = 0; p < n_panels; ++p) {
        const uint8_t* rows[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) {
          // Rows past the matrix repeat its first row: valid memory, results never stored.
          const int64_t row = kPanelRows * p + r < rows_left ? r0 + kPanelRows * p + r : r0;
          rows[r] = w + static_cast<uint64_t>(row) * w_stride + static_cast<uint64_t>(b0) * F::kWBlockBytes;
        }
        F::pack(s.panel[p], rows, kc);
      }
      for (int64_t t0 = 0; t0 < n_tokens; t0 += tile_tokens) {
        const int tt = static_cast<int>(std::min<int64_t>(tile_tokens, n_tokens - t0));
        const uint8_t* act[6];
        for (int t = 0; t < tt; ++t) {
          act[t] = a + static_cast<uint64_t>(t0 + t) * a_stride + static_cast<uint64_t>(b0) * F::kABlockBytes;
          F::prep(&s.tok[t], act[t], kc);
        }
        float* yt = y + t0 * y_stride + r0;
        if (n_panels == 2) {
          run_tokens<F, 2>(tt, s, 0, kc, act, yt, y_stride, rows_left, b0 == 0);
        } else {
          for (int p = 0; p < n_panels; ++p) {
            run_tokens<F, 1>(tt, s, p, kc, act, yt + kPanelRows * p, y_stride, rows_left - kPanelRows * p, b0 == 0);
          }
        }
      }
    }
  }
}

// One row at a time (a super-block holds enough work per row), each token's dot while the row is
// hot, with the row two ahead prefetched (a no-op past the matrix), which keeps the stream from
// memory ahead of the dot better than the hardware prefetcher alone: the super-block formats'
// path for fewer tokens than a tile pays for. row_bytes = n / block elements * block bytes.
template <VecDotFn kDot>
void dots_by_row(int64_t n, uint64_t row_bytes, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const char* ahead = reinterpret_cast<const char*>(w + (r + 2) * w_stride);
    for (uint64_t off = 0; off < row_bytes; off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
    for (int64_t t = 0; t < n_tokens; ++t) kDot(n, y + t * y_stride + r, w + r * w_stride, a + t * a_stride);
  }
}

// The entry point of a super-block format: gemm_panels from kMinPanelTokens tokens on, else dots_by_row.
template <class F, VecDotFn kDot, int64_t kMinPanelTokens = 4>
void gemm_or_dots(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                  int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens < kMinPanelTokens) {
    const uint64_t row_bytes = static_cast<uint64_t>(n / F::kBlockElems) * F::kWBlockBytes;
    dots_by_row<kDot>(n, row_bytes, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  gemm_panels<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace ox::kernels::avx2::tile
