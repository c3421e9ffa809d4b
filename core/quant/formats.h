// The format registry: one row per tensor element format (GGUF's, and the internal layouts a kernel
// table may convert weights to), holding every fact about it that the rest of the engine needs.
// dtype_facts() and quant_traits() are views of this table; the loader, the quantize tool, `oxidize
// formats`, the tests and the benchmarks iterate formats() instead of keeping lists of their own.
//
// Adding a format: its block struct (blocks.h, with a static_assert of GGUF's bytes), its scalar
// references (a .cpp of its own, declared in reference.h) and its row below; then one file per ISA
// that accelerates it. Everything else picks it up from here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox {

enum class FormatRole : uint8_t {
  kUnknown,     // an id GGUF never assigned (or removed)
  kFloat,       // F32, F16, BF16: weights, activations and KV cache alike
  kQuantized,   // block-quantized weights (and, for Q8_0 and some others, KV cache entries)
  kActivation,  // Q8_1, Q8_K: what activations are converted to, never weights
  kInteger,     // I8..I64, F64: GGUF can store them; no model we run reads them
  kInternal,    // a re-layout of a GGUF format (dtype.h); never in a file
};

struct Format {
  DType type = DType::F32;
  FormatRole role = FormatRole::kUnknown;
  DTypeFacts facts{};    // name, block size, bytes per block, known, supported
  QuantTraits traits{};  // scalar references and the activation format of the dot product
  // Byte offsets of the block's fp16 multipliers (the scale d, the additive min m / dmin; -1 where
  // there is none): what tests rewrite to reach extreme scales.
  int16_t d_offset = -1;
  int16_t min_offset = -1;
  // What llama.cpp's quantizer stores a row in when its length is not a multiple of this format's
  // block size (llama_tensor_get_type's fallback); F16 where that does not fit either.
  DType row_fallback = DType::F16;
  // The GGUF format an internal layout re-arranges (Q4_K for Q4_K_IL); the format itself otherwise.
  DType file_type = DType::F32;
};

// Every row, in DType id order (ids GGUF never assigned have role kUnknown).
std::span<const Format> formats();
const Format& format(DType type);

// A weight format this engine can compute with: dequantize, dot product and quantize all present
// (the scalar references; kernels may add faster versions). Internal layouts count.
bool is_weight_format(const Format& f);

// The weight formats (is_weight_format) in id order, internal layouts only if asked for: what tests
// and benchmarks iterate.
std::vector<DType> weight_formats(bool with_internal_layouts = false);
// The formats activations are converted to for some weight format's dot product (its vec_dot_type).
std::vector<DType> activation_formats();

}  // namespace ox
