// Per-format compute facts: scalar reference conversions and the activation format each
// weight format's dot product consumes. Kernels (kernels/) must match these bit for bit
// on integer paths and within a stated tolerance on float accumulations.
#pragma once

#include <cstdint>

#include "core/quant/dtype.h"

namespace ox {

// y[0..n) = dequantized x; n is a multiple of the block size.
using ToFloatFn = void (*)(const void* x, float* y, int64_t n);
// Quantize n floats into blocks (reference quality, used for weights and activations).
using FromFloatFn = void (*)(const float* x, void* y, int64_t n);
// *s = dot(row x of a weight format, row y of its activation format), n elements.
using VecDotFn = void (*)(int64_t n, float* s, const void* x, const void* y);
// Rewrites n_blocks blocks in place into another layout of the same size (core/quant/interleave.h).
using RelayoutFn = void (*)(void* blocks, int64_t n_blocks);

struct QuantTraits {
  ToFloatFn to_float = nullptr;        // null if the format cannot be dequantized
  FromFloatFn from_float_ref = nullptr;  // null if we cannot quantize to it
  DType vec_dot_type = DType::F32;     // format the activations are converted to for vec_dot
  VecDotFn vec_dot_ref = nullptr;      // scalar reference dot product (null if unsupported)
};

// Scalar reference traits for `type` (all null for formats we do not implement).
const QuantTraits& quant_traits(DType type);

// fp16 / bf16 scalar conversions (round-to-nearest-even), shared by every format.
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

}  // namespace ox
