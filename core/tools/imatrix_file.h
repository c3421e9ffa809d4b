// Importance-matrix files in both formats llama.cpp reads (common/imatrix-loader.cpp): the GGUF one
// llama-imatrix writes by default (tensors <name>.in_sum2 and <name>.counts, imatrix.* keys) and the
// legacy .dat one. Reading validates everything: the bytes are untrusted.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ox {

// llama.cpp's key names (common/imatrix-loader.h).
inline constexpr const char* kImatrixDatasetsKey = "imatrix.datasets";
inline constexpr const char* kImatrixChunkCountKey = "imatrix.chunk_count";
inline constexpr const char* kImatrixChunkSizeKey = "imatrix.chunk_size";

// One weight tensor's statistics: n_mat matrices (experts of a 3-D tensor; 1 otherwise) of n_cols.
struct ImatrixEntry {
  // [n_mat][n_cols]. GGUF: sum over tokens of x[col]^2, raw. Legacy: mean x^2 times n_call.
  std::vector<float> sums;
  // [n_mat]. GGUF: tokens seen per matrix. Legacy: one count, n_call (the chunks it was made over).
  std::vector<int64_t> counts;
};

struct Imatrix {
  std::map<std::string, ImatrixEntry> entries;  // by weight name ("blk.0.attn_q.weight"), sorted
  std::vector<std::string> datasets;            // the text files it was computed on
  uint32_t chunk_count = 0;                     // chunks of text evaluated
  uint32_t chunk_size = 0;                      // tokens per chunk (0 in legacy files: not stored)
  bool legacy = false;                          // read from a .dat file: sums/counts as described above
};

enum class ImatrixFormat { kGguf, kDat };

// The per-column importance llama-quantize hands a quantizer: [n_mat * n_cols], GGUF sums divided
// by their matrix's count (1 for a matrix no token reached), legacy sums divided by n_call.
std::vector<float> imatrix_importance(const Imatrix& imatrix, const ImatrixEntry& entry);

// Adds `from` (read from file `from_name`) to `into`, as llama-imatrix --in-file loads each file:
// GGUF sums and counts add; a legacy file's per-call means become raw sums of chunk_size tokens per
// call; one count spreads over n matrices when a later file has n. Then into.chunk_count is the
// largest count over chunk_size, into.chunk_size is chunk_size, and from's datasets are appended.
// `into` must not be legacy. Errors name both files' value or count numbers for the entry.
Status merge_imatrix(Imatrix& into, const Imatrix& from, uint32_t chunk_size, const std::string& from_name);

// Parses either format (GGUF when the bytes start with its magic). `name` is used in messages,
// which name the file and the entry or key at fault: counts that do not divide the sums, a missing
// half of a pair, a value that is negative, NaN or infinite, a length past the end.
Result<Imatrix> parse_imatrix(std::span<const uint8_t> bytes, const std::string& name);
Result<Imatrix> read_imatrix(const std::string& path);

// The file bytes llama-imatrix would write for these statistics. GGUF needs raw (non-legacy) data;
// .dat needs chunk_size > 0 unless the data was read from a .dat file (then it is written back as is).
Result<std::vector<uint8_t>> imatrix_to_bytes(const Imatrix& imatrix, ImatrixFormat format);
Status write_imatrix(const Imatrix& imatrix, const std::string& path, ImatrixFormat format);

}  // namespace ox
