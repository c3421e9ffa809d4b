// KernelTable::gelu for AVX2 and AVX-512 (kernels/x86/{avx2,avx512}/gelu.cpp) through a vector type V:
// V::kLanes, V::Reg, V::load(const float*), V::store(float*, Reg), V::splat(float), V::add, V::sub,
// V::mul, V::div, V::min, V::max (min(a, b) = a < b ? a : b, max(a, b) = a > b ? a : b, as the
// x86 instructions), and V::pow2(shifted) (the float 2^n whose n sits in the low mantissa bits of
// `shifted`, exp_bounded's (bits - 0x4B400000 + 127) << 23).
// Reference: ox::gelu_ref / gelu_one (core/base/activation.h) and ox::exp_bounded, bit for bit: the
// same float operations in the same order, each rounded on its own (no FMA: every product is its
// own multiply, and the project's -ffp-contract=off keeps the compiler from fusing them).
#pragma once

#include <cstdint>

namespace ox::kernels::x86 {

template <class V>
inline typename V::Reg exp_bounded(typename V::Reg v) {
  using R = typename V::Reg;
  const R round = V::splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const R shifted = V::add(V::mul(v, V::splat(1.44269504088896341f)), round);
  const R n = V::sub(shifted, round);
  const R r = V::sub(V::sub(v, V::mul(n, V::splat(0.693145751953125f))), V::mul(n, V::splat(1.428606765330187e-06f)));
  // Horner from r^7 / 7! down, as the reference.
  R p = V::splat(1.0f / 5040.0f);
  p = V::add(V::mul(p, r), V::splat(1.0f / 720.0f));
  p = V::add(V::mul(p, r), V::splat(1.0f / 120.0f));
  p = V::add(V::mul(p, r), V::splat(1.0f / 24.0f));
  p = V::add(V::mul(p, r), V::splat(1.0f / 6.0f));
  p = V::add(V::mul(p, r), V::splat(0.5f));
  p = V::add(V::mul(p, r), V::splat(1.0f));
  p = V::add(V::mul(p, r), V::splat(1.0f));
  return V::mul(p, V::pow2(shifted));
}

// x[i] = gelu_one(x[i]) for the whole vectors of x; returns how many elements it did (the caller
// finishes the rest with the reference).
template <class V>
inline int64_t gelu(float* x, int64_t n) {
  using R = typename V::Reg;
  const R c = V::splat(-2.0f * 0.7978845608028654f), k = V::splat(0.044715f), one = V::splat(1.0f);
  const R lo = V::splat(-87.0f), hi = V::splat(88.0f);
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const R v = V::load(x + i);
    // m = c * v * (1 + k * v * v), left to right as the reference; then its clamps, m < -87 ? -87 : m
    // (max(lo, m): lo > m ? lo : m, NaN included) and m > 88 ? 88 : m.
    R m = V::mul(V::mul(c, v), V::add(one, V::mul(V::mul(k, v), v)));
    m = V::min(hi, V::max(lo, m));
    V::store(x + i, V::div(v, V::add(one, exp_bounded<V>(m))));
  }
  return i;
}

}  // namespace ox::kernels::x86
