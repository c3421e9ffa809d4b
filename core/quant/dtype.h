// DType: every tensor element format GGUF defines, numbered as GGUF numbers them,
// and the format facts (block size, bytes per block) needed to size and validate tensors.
#pragma once

#include <cstdint>
#include <string_view>

namespace ox {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  // 4 and 5 were Q4_2/Q4_3, removed from GGUF.
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  // 31..33 were the removed Q4_0_4_4 / Q4_0_4_8 / Q4_0_8_8 repackings.
  TQ1_0 = 34,
  TQ2_0 = 35,
  // 36..38 removed IQ4_NL_4_4 / _4_8 / _8_8.
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
  // Internal layouts, never in a file (core/quant/interleave.h): the same blocks as Q4_K / Q6_K with
  // their quants permuted so that the i16 lanes of each 16-byte vector alternate between two
  // sub-blocks. A kernel table may ask for them (KernelTable::relayout); weights are converted in
  // place at load. Numbered well above GGUF's ids, which keep growing.
  Q4_K_IL = 96,
  Q6_K_IL = 97,
  // Q2_K / Q3_K with their quants permuted so that the i16 lanes of each 16-byte plane run over
  // eight sub-blocks (one scale vector per eight sub-blocks).
  Q2_K_IL = 98,
  Q3_K_IL = 99,
};

inline constexpr uint32_t kDTypeCount = 100;  // one past the largest type id (GGUF's, then the internal ones)

// Format facts of one DType. `block_size` elements are stored in `type_size` bytes.
// `known` is false for ids GGUF never assigned (or removed) and for the internal layouts; a file
// tensor of such a type is an error.
// `supported` says whether this engine can compute with it (dequantize / dot product).
struct DTypeFacts {
  const char* name;
  uint32_t block_size;
  uint32_t type_size;
  bool known;
  bool supported;
};

const DTypeFacts& dtype_facts(DType type);

// True when `raw` is a type id GGUF defines (validation of untrusted files).
bool dtype_is_known(uint32_t raw);

inline const char* dtype_name(DType type) { return dtype_facts(type).name; }

// The GGUF type whose blocks an internal layout holds (Q4_K for Q4_K_IL); any other type itself.
// What a file said, for what must not depend on the layouts a kernel table converted to.
DType dtype_file_type(DType type);

// Bytes used by a row of `n` elements; n must be a multiple of the block size (callers check).
inline uint64_t dtype_row_bytes(DType type, uint64_t n) {
  const DTypeFacts& f = dtype_facts(type);
  return n / f.block_size * f.type_size;
}

// Parses a GGUF type name as written by llama.cpp ("Q4_K", "f16", case-insensitive); false if unknown.
bool dtype_from_name(std::string_view name, DType* out);

}  // namespace ox
