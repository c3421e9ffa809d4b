// AVX2 gemm[F32]: F32 weights against f32 activations, the outer-product tile of
// kernels/x86/gemm_float_tile.h with 6 rows x 16 tokens (12 ymm accumulators). A call with few
// tokens (decode, a short prompt) takes vec_dot_f32 per cell instead, where packing an 8-token
// panel would mostly multiply zeros. Reference: vec_dot_f32_f32, per cell.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"
#include "kernels/x86/gemm_float_tile.h"

namespace ox::kernels::avx2 {
namespace {

struct GemmVec {
  static constexpr int kLanes = 8;
  using Reg = __m256;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
};

}  // namespace

void gemm_f32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride) {
  // 6 rows x 16 tokens; fewer than 4 tokens: vec_dot_f32 per cell.
  x86::f32_gemm<GemmVec, 6, 16, 4>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, vec_dot_f32);
}

}  // namespace ox::kernels::avx2
