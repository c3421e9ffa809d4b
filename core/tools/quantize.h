// Model quantization in llama-quantize's manner: a preset (Q4_K_M, Q8_0, ...) names a default
// weight type plus llama.cpp's rules for which tensors get more bits, which stay as they are
// (1-D, norms) and what to fall back to when a row length does not fit the block size.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/quant/dtype.h"

namespace ox {

// One preset as llama-quantize names it.
struct QuantPreset {
  const char* name;       // "Q4_K_M"
  DType default_type;     // type of the 2-D weights no rule singles out
  uint32_t llama_ftype;   // general.file_type: llama.cpp's LLAMA_FTYPE_* number
};

// Every preset quantize_gguf accepts; find_quant_preset matches names case-insensitively.
const std::vector<QuantPreset>& quant_presets();
const QuantPreset* find_quant_preset(std::string_view name);

// The model facts the type rules look at (from GGUF metadata and the tensor list).
struct QuantModelFacts {
  std::string arch;             // general.architecture
  uint32_t n_layer = 0;         // {arch}.block_count
  uint32_t n_head = 0;          // {arch}.attention.head_count (layer 0)
  uint32_t n_head_kv = 0;       // {arch}.attention.head_count_kv (defaults to n_head)
  uint32_t n_expert = 0;        // {arch}.expert_count
  bool has_output = false;      // an output.weight exists (else token_embd is tied to the output)
  uint32_t n_attention_wv = 0;  // tensors named *attn_v.weight / *attn_qkv.weight / *attn_kv_b.weight
  bool has_imatrix = false;     // an importance matrix is given (some rules differ; quantize_gguf takes none yet)
};

// The type llama.cpp's rules give one tensor (current type `current`, GGUF dims, dims[0] = row
// length) under `preset`. Tensors the rules do not quantize keep `current`; a row length that
// fits neither the type nor its fallback gets F16.
DType quant_tensor_type(const QuantPreset& preset, const QuantModelFacts& facts, std::string_view name,
                        std::span<const uint64_t> dims, DType current);

// True where llama-quantize refuses to quantize tensor `name` to `type` without an importance
// matrix (llama.cpp's tensor_requires_imatrix: the 1- to 2-bit i-quants and IQ3_XXS, except for
// token_embd / output, which a preset never gives those types).
bool quant_needs_importance(std::string_view name, DType type);

// Whether there is a quantizer for `type` (from_float_ref or quantize_rows).
bool can_quantize_to(DType type);

// Converts n_rows rows of n_per_row elements from `src_type` (F32, F16, BF16, or any type with a
// dequantizer) to `dst_type` (can_quantize_to) with the reference quantizers, rows split over
// n_threads threads. `importance` (n_per_row weights, or null) goes to quantize_rows(); it must be
// set for the formats whose traits say needs_importance.
void convert_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows,
                  int64_t n_per_row, int n_threads, const float* importance);

// Reads a GGUF with F32/F16/BF16 weights and writes it quantized under `preset`: metadata copied
// (general.file_type and general.quantization_version set, split.* dropped), tensors in input
// order. n_threads <= 0 uses every core. On error the partial output file is removed. A preset that
// gives some tensor a type needing an importance matrix (quant_requires_importance) is refused
// (kInvalidArgument), as llama-quantize refuses it: quantize_gguf takes no importance matrix yet.
Status quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                     int n_threads);

}  // namespace ox
