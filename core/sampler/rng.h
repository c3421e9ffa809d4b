// Rng: our own deterministic generator (splitmix64-seeded xoshiro256**), so a seed gives the same
// tokens natively and in wasm (std::mt19937's distributions differ between standard libraries).
#pragma once

#include <cstdint>

namespace ox {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();  // [0, 1) with 53 random bits

 private:
  uint64_t s_[4];
};

}  // namespace ox
