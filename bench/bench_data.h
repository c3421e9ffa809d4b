// Inputs shared by the benchmarks: seeded Gaussian floats, and a row of them in a weight or
// activation format through core/quant's reference quantizer.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox::bench {

inline std::vector<float> gaussian(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// x.size() must be a multiple of the block size of t.
inline std::vector<uint8_t> quantize(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> out(dtype_row_bytes(t, static_cast<uint64_t>(x.size())));
  quantize_rows_uniform(t, x.data(), out.data(), 1, static_cast<int64_t>(x.size()));
  return out;
}

}  // namespace ox::bench
