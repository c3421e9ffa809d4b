// Attention's scalar references. attn_accumulate_ref: four positions per pass over acc (a quarter
// of its loads and stores, which would otherwise cost as much as the multiply-adds); the d loops
// vectorise where the target has vectors in its baseline (SIMD128, NEON).
#include "core/base/attention_ref.h"

#include "core/base/exp_bounded.h"

namespace ox {

float attn_softmax_ref(float* s, int64_t n, float scale, float* max) {
  float m = *max;
  for (int64_t j = 0; j < n; ++j) {
    s[j] *= scale;
    m = s[j] > m ? s[j] : m;
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    const float x = s[j] - m;
    s[j] = exp_bounded(x < -87.0f ? -87.0f : x);
    sum += s[j];
  }
  *max = m;
  return sum;
}

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
