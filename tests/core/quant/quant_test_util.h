// Helpers shared by the core/quant tests: deterministic Gaussian data (own Box-Muller, so native
// and wasm see the same numbers), an fp16 decoder independent of core/quant, and quantize /
// dequantize wrappers over quant_traits().
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox::test {

inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  auto uniform = [&] { return (static_cast<double>(rng()) + 0.5) / 4294967296.0; };  // (0, 1)
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double t = 6.283185307179586 * uniform();
    v[i] = static_cast<float>(sigma * r * std::cos(t));
    if (i + 1 < n) v[i + 1] = static_cast<float>(sigma * r * std::sin(t));
  }
  return v;
}

// IEEE half decoded from its definition with ldexp (no shared code with core/quant/fp16.cpp).
inline double half_value(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 31;
  const int mant = h & 1023;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<double>(mant + 1024), exp - 25);
}

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline std::vector<uint8_t> quantize(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(t, x.size()));
  quant_traits(t).from_float_ref(x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

inline std::vector<float> dequantize(DType t, const std::vector<uint8_t>& q, size_t n) {
  std::vector<float> y(n);
  quant_traits(t).to_float(q.data(), y.data(), static_cast<int64_t>(n));
  return y;
}

// Every weight format with a full set of references.
inline const std::vector<DType>& weight_formats() {
  static const std::vector<DType> v = {DType::F32,    DType::F16,   DType::BF16,  DType::Q4_0,   DType::Q4_1,
                                       DType::Q5_0,   DType::Q5_1,  DType::Q8_0,  DType::Q2_K,   DType::Q3_K,
                                       DType::Q4_K,   DType::Q5_K,  DType::Q6_K,  DType::IQ4_NL, DType::IQ4_XS,
                                       DType::MXFP4,  DType::TQ1_0, DType::TQ2_0};
  return v;
}

}  // namespace ox::test
