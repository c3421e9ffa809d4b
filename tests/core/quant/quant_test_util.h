// Helpers shared by the core/quant tests: deterministic Gaussian data (own Box-Muller, so native
// and wasm see the same numbers), an fp16 decoder independent of core/quant, and quantize /
// dequantize wrappers over quant_traits(), and the reader of llama.cpp reference files (.ref).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/formats.h"
#include "core/quant/traits.h"
#include "tests/support/shared_data.h"

namespace ox::test {

inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  auto uniform = [&] { return (static_cast<double>(rng()) + 0.5) / 4294967296.0; };  // (0, 1)
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double t = 6.283185307179586 * uniform();
    v[i] = static_cast<float>(sigma * r * std::cos(t));
    if (i + 1 < n) v[i + 1] = static_cast<float>(sigma * r * std::sin(t));
  }
  return v;
}

// IEEE half decoded from its definition with ldexp (no shared code with core/quant/fp16.cpp).
inline double half_value(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 31;
  const int mant = h & 1023;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<double>(mant + 1024), exp - 25);
}

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// One row through the format's quantizer (quantize_rows); formats that need an importance matrix
// get uniform importance, which weights every column alike, as the plain squared error does.
inline std::vector<uint8_t> quantize(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(t, x.size()));
  quantize_rows_uniform(t, x.data(), q.data(), 1, static_cast<int64_t>(x.size()));
  return q;
}

// One row through the format's activation recipe (from_float_ref), which the kernels' quantize_row
// reproduce; for Q8_0 it rounds ties to even where the weights' quantizer rounds them away from zero.
inline std::vector<uint8_t> quantize_activation(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(t, x.size()));
  quant_traits(t).from_float_ref(x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

inline std::vector<float> dequantize(DType t, const std::vector<uint8_t>& q, size_t n) {
  std::vector<float> y(n);
  quant_traits(t).to_float(q.data(), y.data(), static_cast<int64_t>(n));
  return y;
}

// Every weight format with a full set of references (the registry's, core/quant/formats.h).
inline const std::vector<DType>& weight_formats() {
  static const std::vector<DType> v = ox::weight_formats();
  return v;
}

// Sections of a tests/data/formats .ref file (written by the *_make_reference.py scripts there):
// u32 name length, name, u64 byte count, bytes. A gtest failure if the file is malformed.
inline std::map<std::string, std::vector<uint8_t>> read_ref_sections(const std::string& file) {
  std::map<std::string, std::vector<uint8_t>> out;
  const std::vector<uint8_t> b = read_file_bytes(source_path("tests/data/formats/" + file));
  size_t at = 0;
  while (at + 4 <= b.size()) {
    uint32_t name_len;
    uint64_t n;
    std::memcpy(&name_len, &b[at], 4);
    if (at + 4 + name_len + 8 > b.size()) break;
    const std::string name(reinterpret_cast<const char*>(&b[at + 4]), name_len);
    std::memcpy(&n, &b[at + 4 + name_len], 8);
    at += 4 + name_len + 8;
    if (n > b.size() - at) break;
    out[name].assign(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  EXPECT_EQ(at, b.size()) << file << ": malformed";
  return out;
}

inline std::vector<float> ref_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

}  // namespace ox::test
