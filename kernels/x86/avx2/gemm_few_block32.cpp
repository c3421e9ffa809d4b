// AVX2 few-token products of the signed 32-element block formats (Q4_0, Q5_0, Q8_0, IQ4_NL,
// MXFP4): 8 rows per group of the shared driver (gemm_few_block32.h), each block of the 8 rows
// transposed once (lane r = row r, the panel loaders of gemm_pack.h) for all tokens, then per
// token vpmaddubsw against each activation dword broadcast. Reference: vec_dot_ref; the bits are those of the
// eight-row decode kernels (gemm_decode.cpp).
#include "kernels/x86/avx2/gemm_few_block32.h"

#include <cstddef>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/codebook.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// The 8-lane part of a format's policy for few32::rows_tokens.
struct Lanes8 {
  static constexpr int kRows = 8;
  using Acc = __m256;
  static __m256 d(const uint8_t* const blk[kRows]) { return tile::gather_halves(blk, 0); }  // d leads a block
  static __m256 mul(__m256 d, float dy) { return _mm256_mul_ps(d, _mm256_set1_ps(dy)); }
  static __m256 zero() { return _mm256_setzero_ps(); }
  static __m256 load(const float* y, int rows) {
    if (rows == kRows) return _mm256_loadu_ps(y);
    alignas(32) float lanes[kRows] = {};
    for (int r = 0; r < rows; ++r) lanes[r] = y[r];
    return _mm256_load_ps(lanes);
  }
  static void store(float* y, int rows, __m256 v) {
    if (rows == kRows) return _mm256_storeu_ps(y, v);
    alignas(32) float lanes[kRows];
    _mm256_store_ps(lanes, v);
    for (int r = 0; r < rows; ++r) y[r] = lanes[r];
  }
  // Pointers `offset` bytes into each row's block.
  static void field(const uint8_t* const blk[kRows], uint64_t offset, const uint8_t* out[kRows]) {
    for (int r = 0; r < kRows; ++r) out[r] = blk[r] + offset;
  }
};

// Q4_0 / Q5_0: u = q in 0..31 (the format's offset subtracted through -offset * sum(a)). Four
// vpmaddubsw results add in i16 before widening: each is 2 products of at most 31 * 128, four
// of them at most 31744 < 32767.
struct Unsigned8 : Lanes8 {
  struct Weights {
    __m256i q[8];
  };
  static __m256 accumulate(const Weights& w, const uint8_t* q, int32_t neg_corr, __m256 d_dy, __m256 acc) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s = _mm256_set1_epi32(neg_corr);
    for (int h = 0; h < 2; ++h) {
      __m256i p = mul_u8s8(w.q[4 * h], tile::bcast4(q + 16 * h));
      for (int k = 1; k < 4; ++k) p = _mm256_add_epi16(p, mul_u8s8(w.q[4 * h + k], tile::bcast4(q + 16 * h + 4 * k)));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d_dy, acc);
  }
};

struct Q4_0Few : Unsigned8 {
  static constexpr uint64_t kBytes = sizeof(BlockQ4_0);
  static constexpr int kOffset = 8;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    const uint8_t* qs[kRows];
    field(blk, offsetof(BlockQ4_0, qs), qs);
    pack::nibbles(qs, w->q);
  }
};

struct Q5_0Few : Unsigned8 {
  static constexpr uint64_t kBytes = sizeof(BlockQ5_0);
  static constexpr int kOffset = 16;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    const uint8_t *qh[kRows], *qs[kRows];
    field(blk, offsetof(BlockQ5_0, qh), qh);
    field(blk, offsetof(BlockQ5_0, qs), qs);
    pack::q5_values(qh, qs, w->q);
  }
};

// Q8_0 / IQ4_NL / MXFP4: full-range signed weights, |w| against the activations carrying w's sign (exact
// while a != -128, which the activation quantizers never produce); one product pair per i16.
struct Signed8 : Lanes8 {
  static constexpr int kOffset = 0;
  struct Weights {
    __m256i w[8], abs_w[8];
  };
  static void signs(Weights* w) {
    for (int k = 0; k < 8; ++k) w->abs_w[k] = _mm256_abs_epi8(w->w[k]);
  }
  static __m256 accumulate(const Weights& w, const uint8_t* q, int32_t, __m256 d_dy, __m256 acc) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s = _mm256_setzero_si256();
    for (int k = 0; k < 8; ++k) {
      const __m256i p = mul_u8s8(w.abs_w[k], _mm256_sign_epi8(tile::bcast4(q + 4 * k), w.w[k]));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d_dy, acc);
  }
};

struct Q8_0Few : Signed8 {
  static constexpr uint64_t kBytes = sizeof(BlockQ8_0);
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    const uint8_t* qs[kRows];
    field(blk, offsetof(BlockQ8_0, qs), qs);
    pack::bytes32(qs, w->w);
    signs(w);
  }
};

// IQ4_NL, MXFP4 (C: codebook.h), whose scale need not be an fp16 d.
template <class C>
struct CodebookFew : Signed8 {
  static constexpr uint64_t kBytes = C::kBytes;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    const uint8_t* qs[kRows];
    field(blk, C::kQs, qs);
    codebook::values<C>(qs, w->w);
    signs(w);
  }
  static __m256 d(const uint8_t* const blk[kRows]) { return codebook::scales<C>(blk); }
};

// Each format's policy and the vec_dot of a call's last n_rows % 8 rows (as the decode kernels').
template <DType W>
constexpr GemmFn kFew = nullptr;
template <>
constexpr GemmFn kFew<DType::Q4_0> = few32::gemm<Q4_0Few, vec_dot<DType::Q4_0>>;
template <>
constexpr GemmFn kFew<DType::Q5_0> = few32::gemm<Q5_0Few, vec_dot<DType::Q5_0>>;
template <>
constexpr GemmFn kFew<DType::Q8_0> = few32::gemm<Q8_0Few, vec_dot<DType::Q8_0>>;
template <>
constexpr GemmFn kFew<DType::IQ4_NL> = few32::gemm<CodebookFew<codebook::IQ4_NL>, vec_dot<DType::IQ4_NL>>;
template <>
constexpr GemmFn kFew<DType::MXFP4> = few32::gemm<CodebookFew<codebook::MXFP4>, vec_dot<DType::MXFP4>>;

}  // namespace

template <DType W>
void gemm_few_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                      uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  kFew<W>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}
template GemmSig gemm_few_block32<DType::Q4_0>;
template GemmSig gemm_few_block32<DType::Q5_0>;
template GemmSig gemm_few_block32<DType::Q8_0>;
template GemmSig gemm_few_block32<DType::IQ4_NL>;
template GemmSig gemm_few_block32<DType::MXFP4>;

}  // namespace ox::kernels::avx2
