// describe_gguf: the human-readable summary `oxidize inspect` prints for a GGUF file.
#pragma once

#include <string>

#include "core/gguf/gguf.h"

namespace ox::gguf {

// Version, alignment, metadata in file order (arrays summarised: element type, count, first
// elements; long strings shortened), a tensor table (name, type, dims, offset, bytes) and
// totals (tensor count, parameter count, bytes by type).
std::string describe_gguf(const GgufFile& f);

// One metadata value as describe_gguf prints it (also useful in error messages and logs).
std::string describe_value(const Value& v);

}  // namespace ox::gguf
