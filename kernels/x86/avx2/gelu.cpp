// AVX2 KernelTable::gelu, 8 floats per step (kernels/x86/gelu_vec.h). Reference: ox::gelu_ref, bit
// for bit.
#include "core/base/activation.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"
#include "kernels/x86/gelu_vec.h"

namespace ox::kernels::avx2 {
namespace {

struct GeluVec {
  static constexpr int kLanes = 8;
  using Reg = __m256;
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg pow2(Reg shifted) {
    const __m256i bits = _mm256_castps_si256(shifted);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(127 - 0x4B400000)), 23));
  }
};

}  // namespace

void gelu(float* x, int64_t n) {
  const int64_t done = x86::gelu<GeluVec>(x, n);
  gelu_ref(x + done, n - done);  // the last n % 8
}

}  // namespace ox::kernels::avx2
