// Scalar references of the activation kernels (KernelTable::silu_mul): the definition every
// ISA's version must reproduce bit for bit, and what the scalar table runs.
#pragma once

#include <cstdint>

#include "core/base/exp_bounded.h"

namespace ox {

// x[i] = silu(x[i]) * y[i] = x[i] / (1 + e^-x[i]) * y[i]; x and y must not overlap. e^-x is
// exp_bounded's (the argument clamped to [-87, 88]), so every target computes the same bits.
void silu_mul_ref(float* x, const float* y, int64_t n);

// x[i] = gelu(x[i]), GELU's tanh form written as v / (1 + e^(-2u)), u = sqrt(2/pi) * v * (1 + 0.044715
// v^2) (0.5 * (1 + tanh u) = 1 / (1 + e^(-2u))), e^(-2u) exp_bounded's with the argument clamped to
// [-87, 88]: the reference of KernelTable::gelu, whose ISA versions give the same bits.
void gelu_ref(float* x, int64_t n);
// One value of gelu_ref, for loops of core (gelu_mul) that must agree with it. Internal to core:
// kernel files restate it with their own vectors (no inline function shared across ISA flags).
inline float gelu_one(float v) {
  constexpr float kMinus2Sqrt2OverPi = -2.0f * 0.7978845608028654f;
  float m = kMinus2Sqrt2OverPi * v * (1.0f + 0.044715f * v * v);
  m = m < -87.0f ? -87.0f : m;  // this min/max form is what GCC vectorises
  m = m > 88.0f ? 88.0f : m;
  return v / (1.0f + exp_bounded(m));
}

}  // namespace ox
