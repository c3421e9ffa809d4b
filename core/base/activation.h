// Scalar references of the activation kernels (KernelTable::silu_mul): the definition every
// ISA's version must reproduce bit for bit, and what the scalar table runs.
#pragma once

#include <cstdint>

namespace ox {

// x[i] = silu(x[i]) * y[i] = x[i] / (1 + e^-x[i]) * y[i]; x and y must not overlap. e^-x is
// exp_bounded's (the argument clamped to [-87, 88]), so every target computes the same bits.
void silu_mul_ref(float* x, const float* y, int64_t n);

}  // namespace ox
