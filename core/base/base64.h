// Base64 (RFC 4648, with padding) of bytes and of float32 arrays as little-endian bytes: OpenAI's
// `encoding_format: "base64"` for embeddings, which clients decode into a Float32Array.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ox {

std::string base64_encode(std::span<const uint8_t> bytes);
// The floats' little-endian IEEE-754 bytes, encoded (what OpenAI's API and llama-server send).
std::string base64_floats(std::span<const float> values);

}  // namespace ox
