// A float's bits, for tests that compare results bit for bit (std::bit_cast is missing from the
// libc++ that Emscripten's clang 14 ships).
#pragma once

#include <cstdint>
#include <cstring>

namespace ox::test {

inline uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

}  // namespace ox::test
