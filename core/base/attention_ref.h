// Scalar references of attention's kernels (KernelTable::attn_softmax, attn_accumulate): what the
// scalar table runs, and what every ISA's version is tested against.
#pragma once

#include <cstdint>

namespace ox {

// One online-softmax step over a tile of raw scores: x_j = s[j] * scale, m = max(*max, x),
// s[j] = e^(x_j - m) (exp_bounded, the argument clamped at -87); *max = m; returns the sum of the
// new s[j]. ISA versions give the same s[j] bits (the sum may differ in order).
float attn_softmax_ref(float* s, int64_t n, float scale, float* max);

// acc[d] += sum_j w[j] * v[j * v_stride + d]   for d < dv, j < n (within float rounding: ISA
// versions add in another order).
void attn_accumulate_ref(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);

}  // namespace ox
