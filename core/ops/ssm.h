// The recurrent ops of state-space models (Mamba, Mamba-2), scalar and sequential over tokens as
// the recurrence is: a causal depthwise convolution that carries its last inputs as state, and the
// selective scan. They follow ggml's CPU ops (ggml_ssm_conv, ggml_ssm_scan) in order of summation.
#pragma once

#include <cstdint>

namespace ox {

// Causal depthwise convolution of n tokens of `channels` channels with kernel width k:
//   out[t][c] = sum_{i<k} w[c][i] * u(t - (k - 1) + i)[c]
// where u(t) = x[t] for t >= 0 and the inputs before the first token come from state: state[c]
// holds the k - 1 previous inputs of channel c, oldest first. Afterwards it holds the last k - 1.
// x: rows of x_stride floats, out: rows of out_stride floats.
void ssm_conv(float* state, const float* x, int64_t x_stride, const float* w, int64_t channels, int k, int64_t n,
              float* out, int64_t out_stride);

// softplus as ggml computes it: x above 20 is returned as is.
float softplus(float x);
// x[i] = x[i] / (1 + exp(-x[i]))
void silu(float* x, int64_t n);

// The selective scan (Mamba's S6; Mamba-2's SSD recurrence when a_per_state is false). Heads of
// head_dim channels each keep a state of d_state values per channel; heads share B and C by groups
// of n_head / n_group. For each token t, head h, channel i and state j:
//   delta = softplus(dt[t][h]),  a = exp(delta * A[h][j])  (A[h] when !a_per_state)
//   s[h][i][j] = s[h][i][j] * a + B[t][g][j] * x[t][h][i] * delta
//   y[t][h][i] = sum_j s[h][i][j] * C[t][g][j]
struct SsmScanShape {
  int n_head = 0;
  int head_dim = 1;
  int d_state = 0;
  int n_group = 1;
  bool a_per_state = true;  // Mamba-1: A [n_head][d_state]; Mamba-2: A [n_head]
};
struct SsmScanInput {
  const float* x;  // [n][x_stride]: n_head * head_dim
  int64_t x_stride;
  const float* dt;  // [n][dt_stride]: n_head (before softplus)
  int64_t dt_stride;
  const float* a;
  const float* b;  // [n][bc_stride]: n_group * d_state
  const float* c;
  int64_t bc_stride;
};
// s: [n_head][head_dim][d_state], updated over the n tokens; y: [n][y_stride].
void ssm_scan(float* s, const SsmScanInput& in, const SsmScanShape& shape, int64_t n, float* y, int64_t y_stride);

}  // namespace ox
