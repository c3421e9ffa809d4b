// Seeded random inputs for numeric tests (the same values on every platform: mt19937 and the
// normal distribution of libstdc++ / libc++ as built here, one seed per use).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ox::test {

// n values drawn from N(0, stddev^2).
inline std::vector<float> random_vector(size_t n, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace ox::test
