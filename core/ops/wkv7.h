// RWKV-7's state update (ggml_rwkv_wkv7): per head a head_size x head_size state S, rows i by
// value channel, columns j by key channel. For each token:
//   sa[i]   = sum_j a[j] S[i][j]
//   S[i][j] = S[i][j] w[j] + v[i] k[j] + sa[i] b[j]
//   y[i]    = sum_j S[i][j] r[j]
// Scalar and sequential over tokens, in ggml's order of summation.
#pragma once

#include <cstdint>

namespace ox {

struct Wkv7Input {
  const float* r;  // each [n][stride]: n_head * head_size
  const float* w;
  const float* k;
  const float* v;
  const float* a;
  const float* b;
  int64_t stride;
};

// s: [n_head][head_size][head_size], updated over the n tokens; y: [n][y_stride].
void wkv7(float* s, const Wkv7Input& in, int n_head, int head_size, int64_t n, float* y, int64_t y_stride);

}  // namespace ox
