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
// Quantizes n_rows rows of n_per_row floats (n_per_row a multiple of the block size) into y, rows
// back to back. `importance`, where not null, holds n_per_row non-negative weights, one per column
// (a tensor's entry of an importance matrix, llama-imatrix's `quant_weights`): the quantizer then
// minimises sum_j importance[j] * (x[j] - q[j])^2 instead of the plain squared error, as llama.cpp's
// ggml_quantize_chunk does for the same format.
using QuantizeRowsFn = void (*)(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
// Rewrites n_blocks blocks in place into another layout of the same size (core/quant/interleave.h).
using RelayoutFn = void (*)(void* blocks, int64_t n_blocks);

struct QuantTraits {
  ToFloatFn to_float = nullptr;        // null if the format cannot be dequantized
  FromFloatFn from_float_ref = nullptr;  // null if no quantizer works without importance (IQ2_XXS)
  DType vec_dot_type = DType::F32;     // format the activations are converted to for vec_dot
  VecDotFn vec_dot_ref = nullptr;      // scalar reference dot product (null if unsupported)
  // Weight quantization with an optional importance matrix; null where the format has no
  // importance-aware quantizer (quantize_rows() then runs from_float_ref row by row, as llama.cpp
  // does for the formats whose quantizer takes no weights, such as Q8_0).
  QuantizeRowsFn quantize_rows = nullptr;
  // True for the formats llama.cpp refuses to quantize without an importance matrix (IQ2_XXS,
  // IQ2_XS, IQ1_S, IQ1_M): their codebooks are too coarse for an unweighted search.
  bool needs_importance = false;
};

// Quantizes rows of `type` (see QuantizeRowsFn) through the format's quantize_rows, or its
// from_float_ref row by row where it has none. The format must be quantizable (from_float_ref or
// quantize_rows set) and, if needs_importance, `importance` not null: callers check both first.
void quantize_rows(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
// quantize_rows with every column weighted alike: no importance, or a uniform one for the formats
// that need one (what synthetic models, tests and benchmarks quantize with; real weights want a
// measured importance matrix).
void quantize_rows_uniform(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row);

// Scalar reference traits for `type` (all null for formats we do not implement).
const QuantTraits& quant_traits(DType type);

// fp16 / bf16 scalar conversions (round-to-nearest-even), shared by every format.
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

}  // namespace ox
