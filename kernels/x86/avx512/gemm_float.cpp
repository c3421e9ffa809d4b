// AVX-512 F32 weights against f32 activations. gemm[F32]: the dot-product tile of
// kernels/x86/gemm_float_tile.h with 2 rows x 3 tokens (24 zmm accumulators), for every call, one
// token included: vec_dot<DType::F32>'s bits. gemm_wide[F32] (encoders' embedding passes): the outer-product
// tile of kernels/gemm_float_outer.h. Reference: vec_dot_f32_f32, per cell.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"
#include "kernels/gemm_float_outer.h"
#include "kernels/x86/gemm_float_tile.h"

namespace ox::kernels::avx512 {
namespace {

// vec_dot<DType::F32>'s vectors (float_dot.cpp): 16 lanes, the n % 16 left over by masked loads.
struct GemmVec : F32x16 {
  static constexpr bool kMaskedTail = true;
  static Reg load_first(const uint8_t* p, int count) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static void pin(Reg& v) {
#if defined(SIMDE_ENABLE_NATIVE_ALIASES)  // tests/kernels/avx512_emulated_test.cpp: no register to pin
    (void)v;
#else
    asm("" : "+v"(v));
#endif
  }
};

// The outer-product tile's vectors (gemm_float_outer.h).
struct OuterVec : F32x16 {
  // 16 x 16: pairs of rows interleaved, then quads, then 128-bit lanes across rows four apart.
  // After the second step u[4g + c] holds, in 128-bit lane l, column 4l + c of rows 4g..4g+3.
  static void transpose(Reg r[16]) {
    Reg t[16], u[16];
    for (int g = 0; g < 4; ++g) {
      t[4 * g + 0] = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]);
      t[4 * g + 1] = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
      t[4 * g + 2] = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
      t[4 * g + 3] = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
    }
    for (int g = 0; g < 4; ++g) {
      u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
      u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
      u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
      u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
    for (int c = 0; c < 4; ++c) {
      // Lanes 0 and 2 (0x88) or 1 and 3 (0xDD) of rows 0-7, then of rows 8-15, then merged.
      const Reg even_lo = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
      const Reg even_hi = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
      const Reg odd_lo = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
      const Reg odd_hi = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
      r[c] = _mm512_shuffle_f32x4(even_lo, even_hi, 0x88);
      r[8 + c] = _mm512_shuffle_f32x4(even_lo, even_hi, 0xDD);
      r[4 + c] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0x88);
      r[12 + c] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0xDD);
    }
  }
};

// 16 halves to floats (exact): outer_gemm_half_streamed's conversion inside the tile.
struct F16Half {
  static __m512 load(const uint8_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
};
struct BF16Half {
  static __m512 load(const uint8_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};

// gemm_wide[F32]: outer-product tiles of 12 rows x 32 tokens (24 zmm accumulators) over packed
// activation panels; fewer than 8 tokens take the dot-product tile (a 16-token panel would mostly
// multiply zeros). Reference: vec_dot_f32_f32 within float rounding (each cell sums in index order).
void gemm_wide_f32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                   uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens < 8) {
    x86::f32_gemm<GemmVec, 2, 3>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  wide::outer_gemm<OuterVec, 12, 32>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace

// gemm and gemm_few: the tile gives vec_dot<DType::F32>'s bits cell by cell at every size. gemm_wide: the
// outer-product tiles, for encoders' embedding passes only (KernelTable::gemm_wide).
void register_gemm_float(KernelTable& t) {
  t.gemm[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 2, 3>;
  t.gemm_few[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 2, 3>;
  t.gemm_wide[static_cast<uint32_t>(DType::F32)] = gemm_wide_f32;
  // F16 and BF16 through the same 12 x 32 tiles, converted inside them (F16C, exact; avx2's to_float
  // for a row's last columns, which runs on every AVX-512 CPU): left to the AVX2 table's 6 x 16
  // tiles, an F16 bge-base took twice the time of its F32 file.
  t.gemm_wide[static_cast<uint32_t>(DType::F16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half_streamed<OuterVec, F16Half, 12, 32>(avx2::to_float_f16, vec_dot<DType::F16>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::BF16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                       const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half_streamed<OuterVec, BF16Half, 12, 32>(avx2::to_float_bf16, vec_dot<DType::BF16>, n, w, ws, nr, a, as, nt, y, ys);
  };
}

}  // namespace ox::kernels::avx512
