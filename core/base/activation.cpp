// The scalar SwiGLU activation. Compiled with -fno-trapping-math (see the top CMakeLists.txt) so
// that the clamps become min/max and GCC vectorises the loop for the target's baseline ISA.
#include "core/base/activation.h"

#include "core/base/exp_bounded.h"

namespace ox {

void silu_mul_ref(float* __restrict x, const float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // silu(v) = v / (1 + e^-v); e^-v is clamped where it is 0 or huge next to 1 anyway.
    const float v = x[i];
    float minus_v = -v;
    minus_v = minus_v < -87.0f ? -87.0f : minus_v;  // this min/max form is what GCC vectorises
    minus_v = minus_v > 88.0f ? 88.0f : minus_v;
    const float e = exp_bounded(minus_v);
    x[i] = v / (1.0f + e) * y[i];
  }
}

void gelu_ref(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_one(x[i]);
}

}  // namespace ox
