// attn_accumulate_ref: four positions per pass over acc (a quarter of its loads and stores, which
// would otherwise cost as much as the multiply-adds); the d loops vectorise where the target has
// vectors in its baseline (SIMD128, NEON).
#include "core/base/accumulate.h"

namespace ox {

void attn_accumulate_ref(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float w0 = w[j], w1 = w[j + 1], w2 = w[j + 2], w3 = w[j + 3];
    const float* va = v + j * v_stride;
    const float* vb = va + v_stride;
    const float* vc = vb + v_stride;
    const float* vd = vc + v_stride;
    for (int64_t d = 0; d < dv; ++d) acc[d] += (w0 * va[d] + w1 * vb[d]) + (w2 * vc[d] + w3 * vd[d]);
  }
  for (; j < n; ++j) {
    const float wj = w[j];
    const float* vj = v + j * v_stride;
    for (int64_t d = 0; d < dv; ++d) acc[d] += wj * vj[d];
  }
}

}  // namespace ox
