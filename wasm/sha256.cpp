// SHA-256 as specified in FIPS 180-4 section 6.2: 64-byte blocks, big-endian words, 64 rounds.
#include "wasm/sha256.h"

#include <cstring>

namespace ox::web {
namespace {

// First 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4 4.2.2).
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Initial hash: fractional parts of the square roots of the first 8 primes (FIPS 180-4 5.3.3).
constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Sha256::Sha256() { std::memcpy(h_, kInitial, sizeof(h_)); }

void Sha256::compress(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t big_s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const uint32_t ch = (e & f) ^ (~e & g);
    const uint32_t t1 = h + big_s1 + ch + kRound[t] + w[t];
    const uint32_t big_s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = big_s0 + maj;
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
  h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

void Sha256::update(std::span<const uint8_t> bytes) {
  total_len_ += bytes.size();
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  if (block_len_ > 0) {
    const size_t take = n < 64 - block_len_ ? n : 64 - block_len_;
    std::memcpy(block_ + block_len_, p, take);
    block_len_ += static_cast<uint32_t>(take);
    p += take;
    n -= take;
    if (block_len_ < 64) return;
    compress(block_);
    block_len_ = 0;
  }
  for (; n >= 64; p += 64, n -= 64) compress(p);  // whole blocks straight from the input
  std::memcpy(block_, p, n);
  block_len_ = static_cast<uint32_t>(n);
}

std::string Sha256::hex_digest() {
  // Padding (FIPS 180-4 5.1.1): 0x80, zeros to 56 mod 64, then the length in bits, big-endian.
  const uint64_t bit_len = total_len_ * 8;
  block_[block_len_++] = 0x80;
  if (block_len_ > 56) {
    std::memset(block_ + block_len_, 0, 64 - block_len_);
    compress(block_);
    block_len_ = 0;
  }
  std::memset(block_ + block_len_, 0, 56 - block_len_);
  for (int i = 0; i < 8; ++i) block_[56 + i] = static_cast<uint8_t>(bit_len >> (56 - 8 * i));
  compress(block_);
  static const char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      const uint8_t byte = static_cast<uint8_t>(h_[i] >> (24 - 8 * j));
      out[8 * i + 2 * j] = kHex[byte >> 4];
      out[8 * i + 2 * j + 1] = kHex[byte & 15];
    }
  }
  return out;
}

std::string sha256_hex(std::span<const uint8_t> bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex_digest();
}

}  // namespace ox::web
