// llama.cpp's split GGUFs (gguf-split, llama-quantize --keep-split): a model in N files named
// PREFIX-00001-of-0000N.gguf .. PREFIX-0000N-of-0000N.gguf, each a GGUF whose split.no (0-based),
// split.count and split.tensors.count say where it belongs. The one place that knows the naming.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ox::gguf {

inline constexpr std::string_view kSplitNoKey = "split.no";                       // UINT16, 0-based
inline constexpr std::string_view kSplitCountKey = "split.count";                 // UINT16
inline constexpr std::string_view kSplitTensorsCountKey = "split.tensors.count";  // INT32, all shards'
bool is_split_key(std::string_view key);

// The path of shard `no` (0-based) of `count`: "PREFIX-%05d-of-%05d.gguf" (llama_split_path).
std::string split_path(std::string_view prefix, uint32_t no, uint32_t count);
// PREFIX where `path` is split_path(PREFIX, no, count), else nothing (llama_split_prefix).
std::optional<std::string> split_prefix(std::string_view path, uint32_t no, uint32_t count);
// The prefix llama-quantize --keep-split names its shards after: OUT less a final ".gguf".
std::string split_output_prefix(std::string_view out_path);

class GgufFile;
// Writes `in` as `gguf-split --split --split-max-tensors N IN PREFIX` does: shards of up to
// max_tensors tensors in file order, the first with every metadata key, each with split.no,
// split.tensors.count and split.count after them. Returns the paths written; removes them on error.
Result<std::vector<std::string>> write_split(const GgufFile& in, std::string_view prefix, uint32_t max_tensors);

}  // namespace ox::gguf
