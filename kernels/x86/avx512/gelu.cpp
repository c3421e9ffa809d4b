// AVX-512 KernelTable::gelu, 16 floats per step (kernels/x86/gelu_vec.h). Reference: ox::gelu_ref, bit
// for bit.
#include "core/base/activation.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"
#include "kernels/x86/gelu_vec.h"

namespace ox::kernels::avx512 {
namespace {

struct GeluVec {
  static constexpr int kLanes = 16;
  using Reg = __m512;
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg splat(float x) { return _mm512_set1_ps(x); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg pow2(Reg shifted) {
    const __m512i bits = _mm512_castps_si512(shifted);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(127 - 0x4B400000)), 23));
  }
};

}  // namespace

void gelu(float* x, int64_t n) {
  const int64_t done = x86::gelu<GeluVec>(x, n);
  gelu_ref(x + done, n - done);  // the last n % 16
}

}  // namespace ox::kernels::avx512
