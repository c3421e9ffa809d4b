// AVX2 gemm[F32]: F32 weights against f32 activations, the dot-product tile of
// kernels/x86/gemm_float_tile.h with 1 row x 3 tokens (12 ymm accumulators), for every call, one token
// included: vec_dot_f32's bits. Reference: vec_dot_f32_f32, per cell.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"
#include "kernels/x86/gemm_float_tile.h"

namespace ox::kernels::avx2 {
namespace {

// vec_dot_f32's vectors (float_dot.cpp): 8 lanes, the n % 8 left over added after the sum.
struct GemmVec {
  static constexpr int kLanes = 8;
  static constexpr bool kMaskedTail = false;
  using Reg = __m256;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg loadu(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static Reg load_first(const uint8_t*, int) { return zero(); }  // unused: no masked tail
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static float hsum(Reg v) { return avx2::hsum(v); }
  static void pin(Reg& v) { asm("" : "+x"(v)); }
};

}  // namespace

// gemm and gemm_few: the tile gives vec_dot_f32's bits cell by cell at every size.
void register_gemm_float(KernelTable& t) {
  t.gemm[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 1, 3>;
  t.gemm_few[static_cast<uint32_t>(DType::F32)] = x86::f32_gemm<GemmVec, 1, 3>;
}

}  // namespace ox::kernels::avx2
