// exp_bounded: e^v for v in [-87, 88] in plain float operations, shared by SwiGLU (the scalar
// reference in activation.cpp, which the SIMD kernels must match bit for bit) and attention's softmax.
#pragma once

#include <cstdint>
#include <cstring>

namespace ox {

// e^v for v in [-87, 88] (callers clamp), within a few ulp. Written out rather than std::exp so the
// loop vectorises (a prompt's SwiGLU is millions of exps per layer) and so native and wasm give
// the same bits: plain IEEE float operations in a fixed order, no libm.
inline float exp_bounded(float v) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;    // ln 2 in 15 bits: n * kLn2Hi is exact for |n| < 2^9
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  constexpr float kRound = 12582912.0f;           // 1.5 * 2^23: adding it rounds to an integer
  const float shifted = v * kLog2e + kRound;
  const float n = shifted - kRound;
  const float r = (v - n * kLn2Hi) - n * kLn2Lo;   // |r| <= ln2 / 2
  // Taylor terms to r^7 / 7!: the first one left out, r^8 / 8!, is < 6e-9 on |r| <= 0.347, so
  // the float evaluation's rounding (a few ulp) dominates.
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);  // low mantissa bits of `shifted` hold n (two's complement)
  const int32_t scale_bits = (bits - 0x4B400000 + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &scale_bits, 4);
  return p * two_n;
}

}  // namespace ox
