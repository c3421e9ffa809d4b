// to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), what attention
// reads of a quantized V cache a tile of positions at a time, written once over an ISA's
// primitives P (kv_to_float.cpp in kernels/x86/avx2, kernels/neon, kernels/simd128):
//   P::Values                     a block's 32 values as signed bytes, in element order
//   P::bytes(const int8_t* qs)    32 bytes as they are (Q8_0)
//   P::nibbles(const uint8_t* qs) 16 bytes -> low nibbles (elements 0..15), high (16..31)
//   P::fifth_bits(const uint8_t* qh)  0x10 in element i where bit i of the u32 qh is set
//   P::add(Values, int8_t), P::either(Values, Values) (or), P::lookup(Values) (kIQ4NLValues[i])
//   P::store<kMin>(Values, float d, float m, float* y)  y[i] = d * v[i] (+ m)
//   P::fp16(uint16_t)
// The products and sums are single roundings with no fused multiply-add, as the scalar
// reference computes them (-ffp-contract=off; wasm has no FMA), so every ISA gives its bits.
// Instantiated with each ISA's own P (a different type per folder, so no COMDAT copy is shared
// between files compiled for different CPUs).
#pragma once

#include <cstdint>

#include "core/quant/blocks.h"
#include "kernels/kernels.h"

namespace ox::kernels::kv_to_float {

// values(block, &d, &m) -> P::Values for each block of a row of n values.
template <class P, bool kMin, typename Block, typename Fn>
inline void blocks(const void* vx, float* y, int64_t n, Fn values) {
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / 32; ++b) {
    float d = 0.0f, m = 0.0f;
    const typename P::Values v = values(x[b], &d, &m);
    P::template store<kMin>(v, d, m, y + 32 * b);
  }
}

template <class P>
inline void install(KernelTable& t) {
  auto set = [&](DType type, ToFloatFn fn) { t.to_float[static_cast<uint32_t>(type)] = fn; };
  set(DType::Q8_0, [](const void* vx, float* y, int64_t n) {
    blocks<P, false, BlockQ8_0>(vx, y, n, [](const BlockQ8_0& b, float* d, float*) {
      *d = P::fp16(b.d);
      return P::bytes(b.qs);
    });
  });
  set(DType::Q4_0, [](const void* vx, float* y, int64_t n) {
    blocks<P, false, BlockQ4_0>(vx, y, n, [](const BlockQ4_0& b, float* d, float*) {
      *d = P::fp16(b.d);
      return P::add(P::nibbles(b.qs), -8);
    });
  });
  set(DType::Q4_1, [](const void* vx, float* y, int64_t n) {
    blocks<P, true, BlockQ4_1>(vx, y, n, [](const BlockQ4_1& b, float* d, float* m) {
      *d = P::fp16(b.d);
      *m = P::fp16(b.m);
      return P::nibbles(b.qs);
    });
  });
  set(DType::Q5_0, [](const void* vx, float* y, int64_t n) {
    blocks<P, false, BlockQ5_0>(vx, y, n, [](const BlockQ5_0& b, float* d, float*) {
      *d = P::fp16(b.d);
      return P::add(P::either(P::nibbles(b.qs), P::fifth_bits(b.qh)), -16);
    });
  });
  set(DType::Q5_1, [](const void* vx, float* y, int64_t n) {
    blocks<P, true, BlockQ5_1>(vx, y, n, [](const BlockQ5_1& b, float* d, float* m) {
      *d = P::fp16(b.d);
      *m = P::fp16(b.m);
      return P::either(P::nibbles(b.qs), P::fifth_bits(b.qh));
    });
  });
  set(DType::IQ4_NL, [](const void* vx, float* y, int64_t n) {
    blocks<P, false, BlockIQ4_NL>(vx, y, n, [](const BlockIQ4_NL& b, float* d, float*) {
      *d = P::fp16(b.d);
      return P::lookup(P::nibbles(b.qs));
    });
  });
}

}  // namespace ox::kernels::kv_to_float
