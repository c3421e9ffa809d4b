// AVX-512 gemm[F32]: F32 weights against f32 activations, the dot-product tile of
// kernels/x86/gemm_float_tile.h with 2 rows x 3 tokens (24 zmm accumulators), for every call, one
// token included: vec_dot_f32's bits. Reference: vec_dot_f32_f32, per cell.
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"
#include "kernels/x86/gemm_float_tile.h"

namespace ox::kernels::avx512 {
namespace {

// vec_dot_f32's vectors (float_dot.cpp): 16 lanes, the n % 16 left over by masked loads.
struct GemmVec {
  static constexpr int kLanes = 16;
  static constexpr bool kMaskedTail = true;
  using Reg = __m512;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg loadu(const uint8_t* p) { return _mm512_loadu_ps(p); }
  static Reg load_first(const uint8_t* p, int count) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static float hsum(Reg v) { return hsum512(v); }
  static void pin(Reg& v) {
#if defined(SIMDE_ENABLE_NATIVE_ALIASES)  // tests/kernels/avx512_emulated_test.cpp: no register to pin
    (void)v;
#else
    asm("" : "+v"(v));
#endif
  }
};

}  // namespace

// gemm and gemm_few: the tile gives vec_dot_f32's bits cell by cell at every size.
void register_gemm_float(KernelTable& t) {
  t.gemm[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 2, 3>;
  t.gemm_few[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 2, 3>;
}

}  // namespace ox::kernels::avx512
