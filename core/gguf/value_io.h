// Internal helpers shared by the GGUF reader, writer and describer: value type facts and the
// little-endian scalar decoding. Not part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/gguf/gguf.h"

namespace ox::gguf {

// True for the 13 type ids GGUF defines.
inline bool value_type_is_known(uint32_t raw) { return raw <= static_cast<uint32_t>(ValueType::FLOAT64); }

// Bytes of one fixed-size scalar; 0 for STRING and ARRAY (variable size).
uint32_t value_type_size(ValueType type);

bool is_signed_integer(ValueType type);
bool is_unsigned_integer(ValueType type);  // UINT8..UINT64, not BOOL
bool is_float(ValueType type);

// Decodes the scalar at `p` (value_type_size(type) bytes, any alignment) into out->u / i / f.
void decode_scalar(ValueType type, const uint8_t* p, Value* out);

// `s` made safe to print in a message: control and non-ASCII bytes as \xNN, cut to `max` bytes.
std::string printable(std::string_view s, size_t max = 96);

}  // namespace ox::gguf
