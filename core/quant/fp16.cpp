// IEEE half (fp16) and bfloat16 <-> float32 conversions, bit-exact and portable (no F16C):
// round to nearest even, subnormals kept, overflow to infinity, NaN stays NaN (quieted).
#include <cstdint>
#include <cstring>

#include "core/quant/traits.h"

namespace ox {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

}  // namespace

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -mag : mag;
  }
  if (exp == 31) return bits_float(sign | 0x7F800000u | (mant << 13));  // Inf / NaN (payload kept)
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));         // rebias 15 -> 127
}

uint16_t f32_to_fp16(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) {
    if (ax == 0x7F800000u) return sign | 0x7C00;
    // NaN: keep the top payload bits and force the quiet bit so it can never become Inf.
    return static_cast<uint16_t>(sign | 0x7E00 | ((ax >> 13) & 0x3FF));
  }
  if (ax >= 0x477FF000u) return sign | 0x7C00;  // >= 65520 (midpoint past 65504) rounds to Inf
  if (ax < 0x38800000u) {
    // Below 2^-14: result is a subnormal half, round(|f| * 2^24) in units of 2^-24.
    if (ax < 0x33000000u) return sign;  // < 2^-25 (and 2^-25 itself ties to even 0)
    const uint32_t mant = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - (ax >> 23);  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // may carry into the smallest normal: fine
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (ax >> 13) - (112u << 10);  // rebias 127 -> 15, keep 10 mantissa bits
  const uint32_t rem = ax & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // carry into the exponent is correct
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  // Round to nearest even on the 16 dropped bits; overflow past the largest finite gives Inf.
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1)) >> 16);
}

}  // namespace ox
