// wkv7: the plain loops of wkv7.h.
#include "core/ops/wkv7.h"

namespace ox {

void wkv7(float* s, const Wkv7Input& in, int n_head, int head_size, int64_t n, float* y, int64_t y_stride) {
  const int64_t hs = head_size;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = t * in.stride;
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t off = row + h * hs;
      const float *r = in.r + off, *w = in.w + off, *k = in.k + off, *v = in.v + off, *a = in.a + off,
                  *b = in.b + off;
      float* sh = s + h * hs * hs;
      for (int64_t i = 0; i < hs; ++i) {
        float* si = sh + i * hs;
        float sa = 0.0f;
        for (int64_t j = 0; j < hs; ++j) sa += a[j] * si[j];
        float out = 0.0f;
        for (int64_t j = 0; j < hs; ++j) {
          si[j] = si[j] * w[j] + v[i] * k[j] + sa * b[j];
          out += si[j] * r[j];
        }
        y[t * y_stride + h * hs + i] = out;
      }
    }
  }
}

}  // namespace ox
