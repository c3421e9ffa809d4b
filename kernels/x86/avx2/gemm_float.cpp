// AVX2 F32 weights against f32 activations. gemm[F32]: the dot-product tile of
// kernels/x86/gemm_float_tile.h with 1 row x 3 tokens (12 ymm accumulators), for every call, one
// token included: vec_dot<DType::F32>'s bits. gemm_wide[F32] (encoders' embedding passes): the outer-product
// tile of kernels/gemm_float_outer.h. Reference: vec_dot_f32_f32, per cell.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"
#include "kernels/gemm_float_outer.h"
#include "kernels/x86/gemm_float_tile.h"

namespace ox::kernels::avx2 {
namespace {

// vec_dot<DType::F32>'s vectors (float_dot.cpp): 8 lanes, the n % 8 left over added after the sum.
struct GemmVec : F32x8 {
  static constexpr bool kMaskedTail = false;
  static Reg load_first(const uint8_t*, int) { return zero(); }  // unused: no masked tail
  static void pin(Reg& v) { asm("" : "+x"(v)); }
};

// The outer-product tile's vectors (gemm_float_outer.h).
struct OuterVec : F32x8 {
  // 8 x 8: pairs of rows interleaved, then quads (u[4g + c] holds, in 128-bit lane l, column
  // 4l + c of rows 4g..4g+3), then the 128-bit lanes of rows 0-3 and 4-7 paired.
  static void transpose(Reg r[8]) {
    Reg t[8], u[8];
    for (int g = 0; g < 2; ++g) {
      t[4 * g + 0] = _mm256_unpacklo_ps(r[4 * g], r[4 * g + 1]);
      t[4 * g + 1] = _mm256_unpackhi_ps(r[4 * g], r[4 * g + 1]);
      t[4 * g + 2] = _mm256_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
      t[4 * g + 3] = _mm256_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
    }
    for (int g = 0; g < 2; ++g) {
      u[4 * g + 0] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
      u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
      u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
      u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
    for (int c = 0; c < 4; ++c) {
      r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
      r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
    }
  }
};

// 8 halves to floats (exact): outer_gemm_half_streamed's conversion inside the tile.
struct F16Half {
  static __m256 load(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
};
struct BF16Half {
  static __m256 load(const uint8_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};

// gemm_wide[F32]: outer-product tiles of 6 rows x 16 tokens (12 ymm accumulators) over packed
// activation panels; fewer than 4 tokens take the dot-product tile (an 8-token panel would mostly
// multiply zeros). Reference: vec_dot_f32_f32 within float rounding (each cell sums in index order).
void gemm_wide_f32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens < 4) {
    x86::f32_gemm<GemmVec, 1, 3>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  wide::outer_gemm<OuterVec, 6, 16>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace

// gemm and gemm_few: the tile gives vec_dot<DType::F32>'s bits cell by cell at every size. gemm_wide: the
// outer-product tiles, for encoders' embedding passes only (KernelTable::gemm_wide).
void register_gemm_float(KernelTable& t) {
  t.gemm[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 1, 3>;
  t.gemm_few[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 1, 3>;
  t.gemm_wide[static_cast<uint32_t>(DType::F32)] = gemm_wide_f32;
  // F16 and BF16 through the same tiles, converted inside them (F16C, exact):
  // wide::outer_gemm_half_streamed (the AVX-512 table puts its own 12 x 32 ones in their place).
  t.gemm_wide[static_cast<uint32_t>(DType::F16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half_streamed<OuterVec, F16Half, 6, 16>(to_float_f16, vec_dot<DType::F16>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::BF16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                       const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half_streamed<OuterVec, BF16Half, 6, 16>(to_float_bf16, vec_dot<DType::BF16>, n, w, ws, nr, a, as, nt, y, ys);
  };
}

}  // namespace ox::kernels::avx2
