// SHA-256 (FIPS 180-4) over bytes already in wasm memory, so the browser package can verify a
// downloaded or cached model without copying it back out to JS (SubtleCrypto needs one buffer).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ox::web {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  // Pads, finishes and returns the digest as 64 lowercase hex digits; the object is then spent.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);

  uint32_t h_[8];
  uint8_t block_[64];
  uint32_t block_len_ = 0;
  uint64_t total_len_ = 0;  // bytes hashed so far (a model can pass 4 GiB in total)
};

std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace ox::web
