// The gated delta rule (Qwen3.5 / Qwen3-Next linear attention; ggml_gated_delta_net): per value
// head h a state M of S x S (row j by value channel, column i by key channel), q and k from key
// head h % n_k_head. For each token, with decay g and learning rate beta per head:
//   M *= exp(g)
//   delta[j] = (v[j] - sum_i M[j][i] k[i]) * beta
//   M[j][i] += delta[j] k[i]
//   y[j]     = sum_i M[j][i] q[i] / sqrt(S)
// Scalar and sequential over tokens, in ggml's order of summation.
#pragma once

#include <cstdint>

namespace ox {

struct DeltaNetInput {
  const float* q;  // [n][qk_stride]: n_k_head * S (l2-normalised by the caller)
  const float* k;
  int64_t qk_stride;
  const float* v;  // [n][v_stride]: n_v_head * S
  int64_t v_stride;
  const float* g;     // [n][n_v_head] log-decay
  const float* beta;  // [n][n_v_head]
};

// m: [n_v_head][S][S], updated over the n tokens; y: [n][y_stride].
void gated_delta_rule(float* m, const DeltaNetInput& in, int n_v_head, int n_k_head, int s, int64_t n, float* y,
                      int64_t y_stride);

}  // namespace ox
