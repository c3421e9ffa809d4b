// The few-token driver of the signed 32-element block formats (Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4
// against Q8_0; gemm_few_block32.cpp here and in avx512/): rows in groups of one vector's lanes (lane r =
// row r), each group's blocks unpacked once for every token of the step, no panels in memory.
// Per (row, token): acc = fma(float(block sum), d * dy, acc) in block order with the block sum
// exact, the arithmetic of the eight-row decode kernels (gemm_decode.cpp), so a sequence gets the
// same bits in a step of several as alone. Everything is static: no COMDAT copy shared across ISAs.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2::few32 {

// Blocks whose per-token terms are prepared at once (8 tokens: 16 KB); longer rows take several
// passes, each carrying a row's accumulator through y (exact: it is stored as the float it is).
constexpr int64_t kChunk = 256;

// Per block of a chunk and token: the activation scale and -offset * sum(a), [block][token].
struct TokenTerms {
  float dy[kChunk][few_tokens::kGroup];
  int32_t neg_corr[kChunk][few_tokens::kGroup];
};

// Sum of a Q8_0 block's 32 quants: vpsadbw of a + 128 against zero, then the bias off.
static inline int32_t sum_quants(const int8_t* qs) {
  const __m256i u = _mm256_xor_si256(load256(qs), _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i s = _mm256_sad_epu8(u, _mm256_setzero_si256());
  __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  t = _mm_add_epi64(t, _mm_unpackhi_epi64(t, t));
  return _mm_cvtsi128_si32(t) - 32 * 128;
}

template <int T>
static inline void prepare(int offset, const uint8_t* a, uint64_t a_stride, int64_t b0, int64_t kc, TokenTerms* terms) {
  for (int t = 0; t < T; ++t) {
    const BlockQ8_0* blk = reinterpret_cast<const BlockQ8_0*>(a + static_cast<uint64_t>(t) * a_stride) + b0;
    for (int64_t b = 0; b < kc; ++b) {
      terms->dy[b][t] = fp16(blk[b].d);
      terms->neg_corr[b][t] = offset == 0 ? 0 : -offset * sum_quants(blk[b].qs);
    }
  }
}

// Tokens t < T (activation rows a_stride bytes apart) against rows [0, n_rows), results at
// y[t * y_stride + r]. L, one format on one ISA, supplies:
//   kRows (lanes), kBytes (block size), kOffset (the unsigned form's offset, 0 if none), Acc (f32
//   lanes), Weights (an unpacked block of kRows rows), and
//   values(blk[kRows], Weights*)  d(blk[kRows]) -> Acc  mul(Acc, float)  zero()  load(y, rows)
//   store(y, rows, Acc)
//   accumulate(const Weights&, const uint8_t* q (a token's quants), neg_corr, Acc d_dy, Acc acc)
//     -> fma(float(block sum), d_dy, acc)
template <class L, int T>
static inline void rows_tokens(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                               uint64_t a_stride, float* y, int64_t y_stride) {
  constexpr uint64_t kA = sizeof(BlockQ8_0), kAQs = offsetof(BlockQ8_0, qs);
  constexpr int kRows = L::kRows;
  const int64_t nb = n / kQK8_0;
  alignas(64) TokenTerms terms;
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t kc = std::min(kChunk, nb - b0);
    prepare<T>(L::kOffset, a, a_stride, b0, kc, &terms);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, n_rows - r0));
      const uint8_t* row[kRows];
      for (int r = 0; r < kRows; ++r) {
        // Rows past the matrix repeat its first row: valid memory, results never stored.
        row[r] = w + static_cast<uint64_t>(r < rows ? r0 + r : r0) * w_stride + static_cast<uint64_t>(b0) * L::kBytes;
      }
      // The next group of rows, front to back at the rate this group reads its own (rows back to
      // back: the hardware prefetchers follow many streams less well than one; a no-op past the end).
      const char* next = reinterpret_cast<const char*>(row[0] + kRows * w_stride);
      const uint8_t* act[T];
      typename L::Acc acc[T];
      for (int t = 0; t < T; ++t) {
        act[t] = a + static_cast<uint64_t>(t) * a_stride + static_cast<uint64_t>(b0) * kA + kAQs;
        acc[t] = b0 == 0 ? L::zero() : L::load(y + t * y_stride + r0, rows);
      }
      for (int64_t b = 0; b < kc; ++b) {
        for (uint64_t off = 0; off < kRows * L::kBytes + 64; off += 64) {
          _mm_prefetch(next + static_cast<uint64_t>(b) * kRows * L::kBytes + off, _MM_HINT_T0);
        }
        const uint8_t* blk[kRows];
        for (int r = 0; r < kRows; ++r) blk[r] = row[r] + static_cast<uint64_t>(b) * L::kBytes;
        typename L::Weights wq;
        L::values(blk, &wq);
        const typename L::Acc d = L::d(blk);
        for (int t = 0; t < T; ++t) {
          acc[t] = L::accumulate(wq, act[t] + static_cast<uint64_t>(b) * kA, terms.neg_corr[b][t],
                                 L::mul(d, terms.dy[b][t]), acc[t]);
        }
      }
      for (int t = 0; t < T; ++t) L::store(y + t * y_stride + r0, rows, acc[t]);
    }
  }
}

// The gemm entry of a format: groups of up to 8 tokens through rows_tokens. The eight-row decode
// kernels leave a call's last n_rows % 8 rows to the format's AVX2 vec_dot (kTailDot), row by row:
// so does this, for the same bits there too.
template <class L, VecDotFn kTailDot>
static inline void gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                        uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const int64_t whole = n_rows - n_rows % 8;
  if (whole > 0) {
    few_tokens::by_groups(n_tokens, [&](auto tokens, int64_t t0) {
      rows_tokens<L, decltype(tokens)::value>(n, w, w_stride, whole, a + static_cast<uint64_t>(t0) * a_stride, a_stride,
                                              y + t0 * y_stride, y_stride);
    });
  }
  for (int64_t r = whole; r < n_rows; ++r) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      kTailDot(n, y + t * y_stride + r, w + static_cast<uint64_t>(r) * w_stride, a + static_cast<uint64_t>(t) * a_stride);
    }
  }
}

}  // namespace ox::kernels::avx2::few32
