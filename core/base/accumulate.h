// Scalar reference of KernelTable::attn_accumulate, attention's weighted sum of values: what the
// scalar table runs, and what every ISA's version is tested against (within float rounding: the
// order of the additions differs).
#pragma once

#include <cstdint>

namespace ox {

// acc[d] += sum_j w[j] * v[j * v_stride + d]   for d < dv, j < n.
void attn_accumulate_ref(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv);

}  // namespace ox
