// Every kernel table this build can run, checked against the scalar references of core/quant:
// vec_dot per weight format on random, unit-scale (exact) and edge-case rows; activation
// quantizers byte for byte, ties and zeros included; and that SIMD tables are really chosen.
#include "kernels/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "core/quant/blocks.h"
#include "core/quant/formats.h"
#include "core/quant/traits.h"
#include "tests/kernels/kernel_test_fixture.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ox::kernels {
namespace {

// What every table is checked on: the registry's weight formats (internal layouts included) and
// the activation formats their dot products consume (core/quant/formats.h).
const std::vector<DType> kWeightFormats = weight_formats(/*with_internal_layouts=*/true);
const std::vector<DType> kActivationFormats = activation_formats();

uint32_t id(DType t) { return static_cast<uint32_t>(t); }
bool is_float_format(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
int64_t block_size(DType t) { return dtype_facts(t).block_size; }

// How block scales (and the element values of float formats) are drawn.
enum class Mode {
  kRealistic,  // scales like real models; activations from the reference quantizer
  kUnit,       // every scale 1 and small integer values: all float arithmetic is exact
  kExtreme,    // fp16 scales at 65504, subnormal, zero and -0 mixed; huge and tiny activations
  kZero,       // all-zero rows
};

// Bytes at an odd address (offset 1 into the allocation), so kernels see unaligned rows.
class Bytes {
 public:
  explicit Bytes(uint64_t size) : buf_(static_cast<size_t>(size) + 64, 0), size_(size) {}
  uint8_t* data() { return buf_.data() + 1; }
  const uint8_t* data() const { return buf_.data() + 1; }
  uint64_t size() const { return size_; }

 private:
  std::vector<uint8_t> buf_;
  uint64_t size_;
};

// Byte offsets of a block's fp16 multiplier fields: d, and the additive m / dmin (-1 if none).
struct ScaleFields {
  int d = -1;
  int min = -1;
};
ScaleFields scale_fields(DType w) { return {format(w).d_offset, format(w).min_offset}; }

void put_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// A block's fp16 scale d: at d_offset, or for IQ1_M (the one format without a d field) spread over
// the top nibbles of its four u16 scale words, nibble i holding bits 4i..4i+3 (blocks.h).
void put_scale(uint8_t* block, DType w, const ScaleFields& f, uint16_t half) {
  if (f.d >= 0) {
    put_u16(block + f.d, half);
    return;
  }
  if (w != DType::IQ1_M) return;
  uint8_t* scales = block + offsetof(BlockIQ1_M, scales);
  for (int i = 0; i < 4; ++i) {
    uint16_t word;
    std::memcpy(&word, scales + 2 * i, 2);
    word = static_cast<uint16_t>((word & 0x0FFF) | (((half >> (4 * i)) & 0xF) << 12));
    put_u16(scales + 2 * i, word);
  }
}

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  uint32_t u32() { return rng_(); }
  int range(int lo, int hi) { return lo + static_cast<int>(rng_() % static_cast<uint32_t>(hi - lo + 1)); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(rng_() >> 8) * 0x1p-24f; }
  float normal() { return dist_(rng_); }
  template <typename T>
  T pick(std::initializer_list<T> values) {
    return values.begin()[rng_() % values.size()];
  }

 private:
  std::mt19937 rng_;
  std::normal_distribution<float> dist_{0.0f, 1.0f};
};

constexpr std::initializer_list<uint16_t> kExtremeHalves = {0x7BFF, 0xFBFF, 0x0001, 0x03FF, 0x0400,
                                                            0x0000, 0x8000, 0x3C00, 0x1400};

// MXFP4's exponent byte e (scale 2^(e - 128)) in `mode`: realistic scales 2^-13..2^-6; 1 for unit;
// the subnormal scales (e = 0, 1) up to 2^72 for extreme, where 12 * 127 * 32 times the largest
// activation scale, 65504, still leaves room before f32 overflow.
uint8_t mxfp4_exponent(Mode mode, Gen& g) {
  switch (mode) {
    case Mode::kRealistic:
      return static_cast<uint8_t>(g.range(115, 122));
    case Mode::kUnit:
      return 128;
    case Mode::kExtreme:
      return g.pick<uint8_t>({0, 1, 2, 60, 127, 128, 150, 200});
    case Mode::kZero:
      return 0;
  }
  return 0;
}

// One float value for a row of float format `t` in `mode`. Extreme values stay finite in `t`
// (and their products in f32): subnormals, the largest values, signed zeros.
float float_value(DType t, Mode mode, Gen& g) {
  switch (mode) {
    case Mode::kRealistic:
      return g.normal();
    case Mode::kUnit:
      return static_cast<float>(g.range(-8, 8));
    case Mode::kExtreme:
      if (t == DType::F16) return g.pick({6e-8f, -1e-5f, 3e-4f, 65504.0f, -65504.0f, 0.0f, -0.0f, 1.5f});
      return g.pick({1e-40f, -3e-39f, 1e-20f, 6e-8f, 65504.0f, -1e16f, 3e16f, 0.0f, -0.0f, 1.5f});
    case Mode::kZero:
      return 0.0f;
  }
  return 0.0f;
}

Bytes make_float_row(DType t, int64_t n, Mode mode, Gen& g) {
  Bytes b(dtype_row_bytes(t, static_cast<uint64_t>(n)));
  for (int64_t i = 0; i < n; ++i) {
    const float v = float_value(t, mode, g);
    if (t == DType::F32) std::memcpy(b.data() + 4 * i, &v, 4);
    if (t == DType::F16) put_u16(b.data() + 2 * i, f32_to_fp16(v));
    if (t == DType::BF16) put_u16(b.data() + 2 * i, f32_to_bf16(v));
  }
  return b;
}

// Weights: random bytes for the quants, then scales chosen by `mode`.
Bytes make_weights(DType w, int64_t n, Mode mode, Gen& g) {
  if (is_float_format(w)) return make_float_row(w, n, mode, g);
  Bytes b(dtype_row_bytes(w, static_cast<uint64_t>(n)));
  if (mode == Mode::kZero) return b;
  for (uint64_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(g.u32());
  if (w == DType::Q8_0) {  // Q8_0 quants come from nearbyint(x / d) with |x / d| <= 127: never -128
    for (uint64_t i = 0; i < b.size(); ++i) {
      if (i % sizeof(BlockQ8_0) >= 2 && b.data()[i] == 0x80) b.data()[i] = 0x81;
    }
  }
  const ScaleFields f = scale_fields(w);
  const uint32_t type_size = dtype_facts(w).type_size;
  for (int64_t blk = 0; blk < n / block_size(w); ++blk) {
    uint8_t* p = b.data() + blk * type_size;
    if (w == DType::MXFP4) {
      p[offsetof(BlockMXFP4, e)] = mxfp4_exponent(mode, g);
      continue;
    }
    switch (mode) {
      case Mode::kRealistic:
        put_scale(p, w, f, f32_to_fp16(g.uniform(1e-4f, 2e-2f) *
                                       (w == DType::Q4_1 || w == DType::Q5_1 ? 1.0f : g.pick({1.0f, -1.0f}))));
        if (f.min >= 0) put_u16(p + f.min, f32_to_fp16(g.uniform(-0.05f, 0.05f)));
        break;
      case Mode::kUnit:
        put_scale(p, w, f, 0x3C00);
        if (f.min >= 0) put_u16(p + f.min, g.pick<uint16_t>({0x3C00, 0xBC00}));
        break;
      case Mode::kExtreme:
        put_scale(p, w, f, g.pick(kExtremeHalves));
        if (f.min >= 0) put_u16(p + f.min, g.pick(kExtremeHalves));
        break;
      case Mode::kZero:
        break;
    }
  }
  return b;
}

// Activations in format `a`. Unit mode builds the blocks by hand (quants in [-range, range],
// scales 1, consistent sums); other modes run the scalar reference quantizer on random floats.
Bytes make_activations(DType a, int64_t n, Mode mode, Gen& g, int range = 31) {
  if (is_float_format(a)) return make_float_row(a, n, mode, g);
  Bytes b(dtype_row_bytes(a, static_cast<uint64_t>(n)));
  if (mode == Mode::kUnit) {
    for (int64_t blk = 0; blk < n / block_size(a); ++blk) {
      if (a == DType::Q8_K) {
        BlockQ8_K q{};
        q.d = 1.0f;
        for (int j = 0; j < kQK_K; ++j) q.qs[j] = static_cast<int8_t>(g.range(-range, range));
        for (int s = 0; s < kQK_K / 16; ++s) {
          int sum = 0;
          for (int j = 0; j < 16; ++j) sum += q.qs[16 * s + j];
          q.bsums[s] = static_cast<int16_t>(sum);
        }
        std::memcpy(b.data() + blk * sizeof(q), &q, sizeof(q));
      } else {
        BlockQ8_1 q{};  // Q8_0 is the same minus `s`
        q.d = 0x3C00;
        int sum = 0;
        for (int j = 0; j < 32; ++j) sum += q.qs[j] = static_cast<int8_t>(g.range(-range, range));
        q.s = f32_to_fp16(static_cast<float>(sum));  // an integer (even above 2048): still exact
        uint8_t* p = b.data() + blk * dtype_facts(a).type_size;
        if (a == DType::Q8_1) {
          std::memcpy(p, &q, sizeof(q));
        } else {
          std::memcpy(p, &q.d, 2);
          std::memcpy(p + 2, q.qs, 32);
        }
      }
    }
    return b;
  }
  std::vector<float> x(static_cast<size_t>(n), 0.0f);
  if (mode != Mode::kZero) {
    for (int64_t blk = 0; blk < n / block_size(a); ++blk) {
      const float amp = mode == Mode::kExtreme ? g.pick({0.0f, 1e-40f, 1e-30f, 1e-6f, 1.0f, 1e6f, 1e12f})
                                               : g.pick({0.01f, 0.3f, 1.0f, 4.0f});
      for (int64_t j = 0; j < block_size(a); ++j) x[blk * block_size(a) + j] = amp * g.normal();
    }
  }
  scalar::table().quantize_row[id(a)](x.data(), b.data(), n);
  return b;
}

std::vector<float> dequantize(DType t, const Bytes& b, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  quant_traits(t).to_float(b.data(), out.data(), n);
  return out;
}

// sum |w_i * a_i| in double over the two parts the kernels sum separately (the d*q part and the
// min / m part of the asymmetric formats), computed from dequantized values: the scale against
// which float summation-order differences are measured.
double magnitude(DType w, const Bytes& wb, DType a, const Bytes& ab, int64_t n) {
  const std::vector<float> wf = dequantize(w, wb, n);
  const std::vector<float> af = dequantize(a, ab, n);
  std::vector<float> w_nomin = wf;
  const ScaleFields f = scale_fields(w);
  if (f.min >= 0) {
    Bytes copy(wb.size());
    std::memcpy(copy.data(), wb.data(), wb.size());
    for (int64_t blk = 0; blk < n / block_size(w); ++blk)
      put_u16(copy.data() + blk * dtype_facts(w).type_size + f.min, 0);
    w_nomin = dequantize(w, copy, n);
  }
  double mag = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    mag += std::fabs(static_cast<double>(w_nomin[i]) * af[i]);
    mag += std::fabs((static_cast<double>(wf[i]) - w_nomin[i]) * af[i]);
  }
  return mag;
}

// Tolerance for the float part. The scalar reference adds N terms in order (N = elements for
// float formats, about 2 per block for quantized ones: d*isum and the min term), so it is
// within gamma_N * mag of the exact sum (u = 2^-24, gamma_N ~ N u, mag = sum |terms| <=
// magnitude()). SIMD kernels add fewer terms per lane (N / lanes) plus a log-depth lane tree,
// with or without FMA, so they are within gamma_{N/2 + 16} * mag. The difference is therefore
// below (2N + 16) u mag, plus an absolute allowance for subnormal underflow. A wrong nibble or
// scale moves the result by ~mag / sqrt(n), far above this for the short rows tested.
double tolerance(DType w, int64_t n, double mag) {
  const double terms = is_float_format(w) ? static_cast<double>(n) : 2.0 * static_cast<double>(n / block_size(w));
  return (2.0 * terms + 16.0) * 0x1p-24 * mag + (terms + 16.0) * 0x1p-149;
}

float run_dot(const KernelTable& t, DType w, int64_t n, const Bytes& wb, const Bytes& ab) {
  float s = std::nanf("");
  t.vec_dot[id(w)](n, &s, wb.data(), ab.data());
  return s;
}

std::string label(const KernelTable& t, DType w, int64_t n, const char* what) {
  return std::string(t.isa) + " " + dtype_name(w) + " n=" + std::to_string(n) + " " + what;
}

std::vector<int64_t> row_lengths(DType w) {
  if (is_float_format(w)) return {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4096, 4099};
  const int64_t bs = block_size(w);
  std::vector<int64_t> out;
  for (int64_t nb : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33}) out.push_back(nb * bs);
  out.push_back(bs == 32 ? 4096 : 4096 * 2);
  return out;
}

TEST_P(KernelTableTest, VecDotMatchesReferenceOnRandomRows) {
  Gen g(1234);
  for (DType w : kWeightFormats) {
    const DType a = quant_traits(w).vec_dot_type;
    for (int64_t n : row_lengths(w)) {
      for (Mode mode : {Mode::kRealistic, Mode::kExtreme}) {
        for (int rep = 0; rep < 3; ++rep) {
          const Bytes wb = make_weights(w, n, mode, g);
          const Bytes ab = make_activations(a, n, mode, g);
          const float want = run_dot(scalar::table(), w, n, wb, ab);
          const float got = run_dot(table(), w, n, wb, ab);
          const double tol = tolerance(w, n, magnitude(w, wb, a, ab, n));
          ASSERT_NEAR(got, want, tol) << label(table(), w, n, mode == Mode::kExtreme ? "extreme" : "random");
        }
      }
    }
  }
}

// Scales of 1 and small integers make every float in both kernels an exact integer (all partial
// sums are bounded by the magnitude, asserted below 2^24): results must agree to the bit, which
// checks the integer paths (nibble order, bit planes, scale unpacking, i16 overflow) exactly.
TEST_P(KernelTableTest, VecDotIsBitExactWithUnitScales) {
  Gen g(99);
  int exact_checks = 0;
  for (DType w : kWeightFormats) {
    const DType a = quant_traits(w).vec_dot_type;
    for (int64_t n : row_lengths(w)) {
      for (int range : {31, 127}) {
        const Bytes wb = make_weights(w, n, Mode::kUnit, g);
        const Bytes ab = make_activations(a, n, Mode::kUnit, g, range);
        if (magnitude(w, wb, a, ab, n) >= 0x1p24) continue;  // partial sums could round
        const float want = run_dot(scalar::table(), w, n, wb, ab);
        const float got = run_dot(table(), w, n, wb, ab);
        ASSERT_EQ(got, want) << label(table(), w, n, "unit scales") << " range " << range;
        ++exact_checks;
      }
    }
  }
  EXPECT_GE(exact_checks, 350) << "of 522";  // most cases fit (423 here): the exact path is not vacuous
}

// The ternary kernels reduce each block to one integer and add its float term in block order, as
// the reference does: the same bits on random and extreme rows, not only within rounding.
TEST_P(KernelTableTest, TernaryVecDotGivesTheReferenceBits) {
  Gen g(31);
  for (DType w : {DType::TQ1_0, DType::TQ2_0}) {
    for (int64_t n : row_lengths(w)) {
      for (Mode mode : {Mode::kRealistic, Mode::kExtreme}) {
        const Bytes wb = make_weights(w, n, mode, g);
        const Bytes ab = make_activations(DType::Q8_K, n, mode, g);
        const float want = run_dot(scalar::table(), w, n, wb, ab);
        const float got = run_dot(table(), w, n, wb, ab);
        uint32_t want_bits, got_bits;
        std::memcpy(&want_bits, &want, 4);
        std::memcpy(&got_bits, &got, 4);
        ASSERT_EQ(got_bits, want_bits) << label(table(), w, n, mode == Mode::kExtreme ? "extreme" : "random")
                                       << ": " << got << " vs " << want;
      }
    }
  }
}

TEST_P(KernelTableTest, VecDotOfZeroRowsIsZero) {
  Gen g(5);
  for (DType w : kWeightFormats) {
    const DType a = quant_traits(w).vec_dot_type;
    for (int64_t n : row_lengths(w)) {
      const Bytes zero_w = make_weights(w, n, Mode::kZero, g);
      const Bytes zero_a = make_activations(a, n, Mode::kZero, g);
      const Bytes wb = make_weights(w, n, Mode::kRealistic, g);
      const Bytes ab = make_activations(a, n, Mode::kRealistic, g);
      EXPECT_EQ(run_dot(table(), w, n, zero_w, ab), 0.0f) << label(table(), w, n, "zero weights");
      EXPECT_EQ(run_dot(table(), w, n, wb, zero_a), 0.0f) << label(table(), w, n, "zero activations");
    }
  }
}

// A weight matrix as matmul walks it: many rows back to back (odd count, rows starting at
// every alignment the block size produces), one activation row.
TEST_P(KernelTableTest, VecDotOverManyRowsOfAMatrix) {
  Gen g(77);
  constexpr int64_t kRows = 37;
  for (DType w : kWeightFormats) {
    const DType a = quant_traits(w).vec_dot_type;
    const int64_t n = 512;
    const uint64_t row_bytes = dtype_row_bytes(w, n);
    const Bytes matrix = make_weights(w, n * kRows, Mode::kRealistic, g);
    const Bytes ab = make_activations(a, n, Mode::kRealistic, g);
    for (int64_t r = 0; r < kRows; ++r) {
      Bytes row(row_bytes);
      std::memcpy(row.data(), matrix.data() + r * row_bytes, row_bytes);
      float want = 0.0f, got = 0.0f;
      scalar::table().vec_dot[id(w)](n, &want, matrix.data() + r * row_bytes, ab.data());
      table().vec_dot[id(w)](n, &got, matrix.data() + r * row_bytes, ab.data());
      ASSERT_NEAR(got, want, tolerance(w, n, magnitude(w, row, a, ab, n))) << label(table(), w, n, "row ") << r;
    }
  }
}

// ---- gemm: tiles of rows x tokens

// Runs table t's gemm (or, for a table without one, the reference) on an n_rows x n_tokens tile
// whose rows sit `w_stride` bytes apart (more than a row: matrices may be views) and whose output
// rows are `y_stride` floats apart; the cells outside the tile must stay untouched.
struct GemmCase {
  DType w;
  int64_t n, n_rows, n_tokens;
};

// `slot`: the table's gemm (default) or another slot of the same contract (gemm_wide). `exact`:
// every cell must hold the reference's bits, not only a value within its rounding.
void check_gemm(const KernelTable& t, const GemmCase& c, Mode mode, Gen& g, const GemmFn* slot = nullptr,
                const char* what = "gemm", bool exact = false) {
  const GemmFn gemm = (slot != nullptr ? slot : t.gemm)[id(c.w)];
  const DType a = quant_traits(c.w).vec_dot_type;
  const uint64_t row_bytes = dtype_row_bytes(c.w, c.n), act_bytes = dtype_row_bytes(a, c.n);
  const uint64_t w_stride = row_bytes + 7, a_stride = act_bytes + 3;  // odd strides: unaligned rows
  Bytes wm(w_stride * c.n_rows), am(a_stride * c.n_tokens);
  std::vector<Bytes> wrows, arows;
  for (int64_t r = 0; r < c.n_rows; ++r) {
    wrows.push_back(make_weights(c.w, c.n, mode, g));
    std::memcpy(wm.data() + r * w_stride, wrows.back().data(), row_bytes);
  }
  for (int64_t k = 0; k < c.n_tokens; ++k) {
    arows.push_back(make_activations(a, c.n, mode, g));
    std::memcpy(am.data() + k * a_stride, arows.back().data(), act_bytes);
  }
  const int64_t y_stride = c.n_rows + 3;
  const float kUntouched = -12345.5f;
  std::vector<float> y(static_cast<size_t>(y_stride * c.n_tokens), kUntouched);
  gemm(c.n, wm.data(), w_stride, c.n_rows, am.data(), a_stride, c.n_tokens, y.data(), y_stride);
  for (int64_t k = 0; k < c.n_tokens; ++k) {
    for (int64_t r = 0; r < y_stride; ++r) {
      const float got = y[static_cast<size_t>(k * y_stride + r)];
      const std::string where = label(t, c.w, c.n, what) + " rows=" + std::to_string(c.n_rows) +
                                " tokens=" + std::to_string(c.n_tokens) + " cell (" + std::to_string(r) + ", " +
                                std::to_string(k) + ")";
      if (r >= c.n_rows) {
        ASSERT_EQ(got, kUntouched) << where << " written outside the tile";
        continue;
      }
      float want = std::nanf("");
      scalar::table().vec_dot[id(c.w)](c.n, &want, wrows[r].data(), arows[k].data());
      if (exact) {
        ASSERT_EQ(float_bits(got), float_bits(want)) << where << ": " << got << " vs " << want;
        continue;
      }
      const double tol = tolerance(c.w, c.n, magnitude(c.w, wrows[r], a, arows[k], c.n));
      ASSERT_NEAR(got, want, tol) << where;
    }
  }
}

// Every tile shape around the register blockings kernels use (1-8 rows or tokens, 16, and odd
// remainders), rows of 1 block up to a few hundred, realistic and extreme scales.
TEST_P(KernelTableTest, GemmMatchesReferenceOnEveryTileShape) {
  Gen g(2468);
  int formats = 0;
  for (DType w : kWeightFormats) {
    if (table().gemm[id(w)] == nullptr) continue;
    ++formats;
    const int64_t bs = is_float_format(w) ? 1 : block_size(w);
    const std::vector<int64_t> lengths = is_float_format(w) ? std::vector<int64_t>{7, 64, 200}
                                                            : std::vector<int64_t>{bs, 3 * bs, 9 * bs};
    for (int64_t n : lengths) {
      for (int64_t rows : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17}) {
        for (int64_t tokens : {1, 2, 3, 4, 5, 6, 8, 9, 13}) {
          check_gemm(table(), {w, n, rows, tokens}, Mode::kRealistic, g);
          if (HasFatalFailure()) return;
        }
      }
      check_gemm(table(), {w, n, 6, 7}, Mode::kExtreme, g);
      check_gemm(table(), {w, n, 9, 1}, Mode::kExtreme, g);  // one token: the decode kernels
      check_gemm(table(), {w, n, 8, 4}, Mode::kZero, g);
      if (HasFatalFailure()) return;
    }
  }
  if (std::string(table().isa) == "scalar") {
    EXPECT_EQ(formats, 0) << "the scalar table has no gemm";
  }
}

// Matrices as big as a layer's (many blocks per row, a long tile): errors that only show when an
// accumulator or a block counter runs long.
TEST_P(KernelTableTest, GemmOnLongRows) {
  Gen g(1357);
  for (DType w : kWeightFormats) {
    if (table().gemm[id(w)] == nullptr) continue;
    check_gemm(table(), {w, is_float_format(w) ? 4099 : 4096 * (block_size(w) == 32 ? 1 : 2), 11, 10},
               Mode::kRealistic, g);
    // A few tokens over rows longer than the few-token kernels' chunk of 256 blocks (9216 = 288 x 32).
    check_gemm(table(), {w, is_float_format(w) ? 4099 : 9216, 19, 3}, Mode::kRealistic, g);
    // Tokens past one pass of a gemm that takes every token (gemm_all_tokens; SIMD128: ~20 tokens
    // of 8192 packed columns a pass, the last pass an edge).
    check_gemm(table(), {w, is_float_format(w) ? 4099 : 8192, 5, 41}, Mode::kRealistic, g);
    check_gemm(table(), {w, is_float_format(w) ? 4099 : 4096 * (block_size(w) == 32 ? 1 : 2), 11, 1}, Mode::kRealistic, g);  // one token: the decode kernels
    if (HasFatalFailure()) return;
  }
}

// The ternary formats' tiles promise their vec_dot's bits (the reference's: see
// TernaryVecDotGivesTheReferenceBits), so that prefill and decode agree: every tile shape, chunk
// counts around the kernels' chunks of blocks (2 and 4), rows of 33 blocks, extreme scales.
TEST_P(KernelTableTest, TernaryGemmGivesTheReferenceBits) {
  Gen g(4321);
  for (DType w : {DType::TQ1_0, DType::TQ2_0}) {
    if (table().gemm[id(w)] == nullptr) continue;
    for (int64_t blocks : {1, 2, 3, 5, 9}) {
      for (int64_t rows : {1, 7, 8, 9, 16, 17, 33}) {
        for (int64_t tokens : {1, 2, 3, 4, 6, 7, 9, 13}) {
          check_gemm(table(), {w, 256 * blocks, rows, tokens}, Mode::kRealistic, g, nullptr, "gemm", true);
          if (HasFatalFailure()) return;
        }
      }
      check_gemm(table(), {w, 256 * blocks, 17, 9}, Mode::kExtreme, g, nullptr, "gemm", true);
      check_gemm(table(), {w, 256 * blocks, 8, 4}, Mode::kZero, g, nullptr, "gemm", true);
      if (HasFatalFailure()) return;
    }
    check_gemm(table(), {w, 256 * 33, 19, 11}, Mode::kRealistic, g, nullptr, "gemm", true);
    if (HasFatalFailure()) return;
  }
}

// gemm_wide (encoders' order-free products): token counts around the outer-product panels (AVX2,
// NEON and SIMD128 16 tokens and their 8-token half, AVX-512 32 and 16) and the few-token
// fallback, rows around the 2-, 4-, 6- and 12-row tiles and their smaller tail tiles (AVX-512 F16:
// 8, 4 and 1), long rows;
// within the reference's rounding.
TEST_P(KernelTableTest, WideGemmMatchesReference) {
  Gen g(9753);
  int formats = 0;
  for (DType w : kWeightFormats) {
    if (table().gemm_wide[id(w)] == nullptr) continue;
    ++formats;
    for (int64_t n : {7, 64, 200}) {
      for (int64_t rows : {1, 2, 3, 5, 6, 7, 11, 12, 13, 17, 20, 25, 37}) {
        for (int64_t tokens : {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 49, 65}) {
          check_gemm(table(), {w, n, rows, tokens}, Mode::kRealistic, g, table().gemm_wide, "gemm_wide");
          if (HasFatalFailure()) return;
        }
      }
      check_gemm(table(), {w, n, 13, 33}, Mode::kExtreme, g, table().gemm_wide, "gemm_wide");
      check_gemm(table(), {w, n, 12, 16}, Mode::kZero, g, table().gemm_wide, "gemm_wide");
    }
    check_gemm(table(), {w, 3072, 19, 70}, Mode::kRealistic, g, table().gemm_wide, "gemm_wide");  // a BERT FFN row
    check_gemm(table(), {w, 4099, 12, 40}, Mode::kRealistic, g, table().gemm_wide, "gemm_wide");
    if (HasFatalFailure()) return;
  }
  const std::string isa = table().isa;
  if (isa == "scalar") {
    EXPECT_EQ(formats, 0) << "the scalar table has no gemm_wide";
  } else {
    // Every ISA (x86, SIMD128, NEON) has the three float formats' wide products, and only those.
    EXPECT_EQ(formats, 3) << isa << ": gemm_wide of F32, F16 and BF16";
  }
}

// A decode step of several sequences (2-8 tokens) against the same rows one token at a time, bit
// for bit, as the x86 few-token kernels promise (Q4_K / Q6_K, TQ1_0 / TQ2_0: vec_dot's arithmetic;
// the block32 formats: the eight-row decode kernels'): then a sequence's greedy tokens cannot depend on which
// others share its step. Whole 16-row groups (the decode kernels' last rows of a matrix that is not
// a multiple of 8 go through vec_dot); lengths within and beyond the block32 kernels' 256-block chunk.
// Not under SIMDe's emulation, whose fmadd without FMA hardware rounds twice.
TEST_P(KernelTableTest, GemmOfAFewTokensGivesTheOneTokenBits) {
  const std::string isa = table().isa;
  if (isa != "avx2" && isa != "avx512") GTEST_SKIP() << isa << " makes no such promise";
  const std::vector<DType> formats = {DType::Q4_0,  DType::Q5_0,  DType::Q8_0, DType::IQ4_NL, DType::MXFP4,
                                     DType::Q4_K,  DType::Q6_K,  DType::TQ1_0, DType::TQ2_0};
  Gen g(8642);
  for (DType w : formats) {
    const GemmFn gemm = table().gemm[id(w)];
    ASSERT_NE(gemm, nullptr) << isa << " " << dtype_name(w);
    const DType a = quant_traits(w).vec_dot_type;
    for (int64_t n : {int64_t{256}, int64_t{2048}, int64_t{9216}}) {
      const int64_t rows = n == 256 ? 37 : 16;  // 37: a call's last rows % 8 rows take vec_dot alone
      const uint64_t w_stride = dtype_row_bytes(w, n), a_stride = dtype_row_bytes(a, n);
      Bytes wm(w_stride * rows), am(a_stride * 8);
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(wm.data() + r * w_stride, make_weights(w, n, Mode::kRealistic, g).data(), w_stride);
      }
      for (int64_t t = 0; t < 8; ++t) {
        std::memcpy(am.data() + t * a_stride, make_activations(a, n, Mode::kRealistic, g).data(), a_stride);
      }
      std::vector<float> alone(static_cast<size_t>(rows * 8));
      for (int64_t t = 0; t < 8; ++t) {
        gemm(n, wm.data(), w_stride, rows, am.data() + t * a_stride, a_stride, 1, alone.data() + t * rows, rows);
      }
      for (int64_t tokens = 2; tokens <= 8; ++tokens) {
        std::vector<float> y(static_cast<size_t>(rows * tokens));
        gemm(n, wm.data(), w_stride, rows, am.data(), a_stride, tokens, y.data(), rows);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(float_bits(y[i]), float_bits(alone[i]))
              << isa << " " << dtype_name(w) << " n=" << n << " tokens=" << tokens << " cell (" << i % rows << ", "
              << i / rows << "): " << y[i] << " vs alone " << alone[i];
        }
      }
    }
  }
}

// MXFP4's scale is an E8M0 byte: every e from the subnormal scales (e = 0, 1) to 2^126 and 2^127
// (e = 254, and 255, E8M0's NaN, which llama.cpp reads as 2^127), against activation scales from
// fp16's smallest subnormal to its largest value (products that underflow, overflow or round).
// One block per row, so the reference's one product and the kernels' one FMA onto zero agree
// exactly (up to the sign of a zero); token counts reach the decode, few-token and panel paths.
// The x86 tables promise that (their panels keep vec_dot's one product per block); SIMD128's i16
// tile sums a block in two halves, so where the product overflows it can give inf - inf = NaN
// for the reference's inf: its extremes are tested within f32's range (mxfp4_test.cpp).
TEST_P(KernelTableTest, MXFP4GemmTakesEveryExponentByte) {
  const std::string isa = table().isa;
  if (isa.rfind("avx", 0) != 0) GTEST_SKIP() << isa << " makes no such promise";
  const GemmFn gemm = table().gemm[id(DType::MXFP4)];
  if (gemm == nullptr) GTEST_SKIP() << table().isa << " has no MXFP4 gemm";
  Gen g(2718);
  constexpr int64_t kRows = 256;
  Bytes wm(sizeof(BlockMXFP4) * kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    uint8_t* blk = wm.data() + r * sizeof(BlockMXFP4);
    blk[offsetof(BlockMXFP4, e)] = static_cast<uint8_t>(r);
    for (size_t j = 0; j < sizeof(BlockMXFP4::qs); ++j) {
      blk[offsetof(BlockMXFP4, qs) + j] = static_cast<uint8_t>(g.u32());
    }
  }
  for (int64_t tokens : {1, 2, 3, 5, 8, 13}) {
    Bytes am(sizeof(BlockQ8_0) * tokens);
    for (int64_t t = 0; t < tokens; ++t) {
      uint8_t* blk = am.data() + t * sizeof(BlockQ8_0);
      put_u16(blk + offsetof(BlockQ8_0, d), g.pick<uint16_t>({0x0001, 0x03FF, 0x1400, 0x3C00, 0x7BFF}));
      for (int j = 0; j < 32; ++j) blk[offsetof(BlockQ8_0, qs) + j] = static_cast<uint8_t>(g.range(-127, 127));
    }
    std::vector<float> y(static_cast<size_t>(kRows * tokens));
    gemm(32, wm.data(), sizeof(BlockMXFP4), kRows, am.data(), sizeof(BlockQ8_0), tokens, y.data(), kRows);
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t r = 0; r < kRows; ++r) {
        float want = 0.0f;
        scalar::table().vec_dot[id(DType::MXFP4)](32, &want, wm.data() + r * sizeof(BlockMXFP4),
                                                  am.data() + t * sizeof(BlockQ8_0));
        const float got = y[static_cast<size_t>(t * kRows + r)];
        ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
            << table().isa << " e=" << r << " tokens=" << tokens << " token " << t << ": " << got << " vs " << want;
      }
    }
  }
}

// The formats of the benchmark matrix (Q4_0, Q8_0, Q4_K_M = Q4_K + Q6_K) must have tile kernels
// on every SIMD table: without one, prefill falls back to one vec_dot per (row, token).
TEST_P(KernelTableTest, SimdTablesHaveGemmForTheCommonFormats) {
  if (std::string(table().isa) == "scalar") return;
  for (DType w : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    EXPECT_NE(table().gemm[id(w)], nullptr) << table().isa << " has no gemm for " << dtype_name(w);
  }
}

// ---- activation quantizers: byte-identical output

std::vector<float> quantizer_input(int kind, int64_t n, int64_t bs, Gen& g) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t blk = 0; blk < n / bs; ++blk) {
    float* xb = x.data() + blk * bs;
    switch (kind) {
      case 0:  // normal values at a per-block amplitude, including 0, subnormal and huge
        for (int64_t j = 0; j < bs; ++j) {
          xb[j] = g.pick({1e-3f, 1.0f, 7.0f, 300.0f}) * g.normal();
        }
        break;
      case 1: {  // amplitudes where the scale underflows, saturates fp16 or is exactly zero
        const float amp = g.pick({0.0f, 1e-44f, 1e-38f, 1e-36f, 2e-35f, 1e5f, 1e7f, 3e38f});
        for (int64_t j = 0; j < bs; ++j) xb[j] = amp * g.uniform(-1.0f, 1.0f);
        break;
      }
      case 2: {  // exact .5 ties: amax 127 (scale 1) or 63.5 (scale 1/2), values k + 1/2 scaled
        const float unit = g.pick({1.0f, 0.5f});
        xb[0] = g.pick({127.0f, -127.0f}) * unit;
        for (int64_t j = 1; j < bs; ++j) xb[j] = (static_cast<float>(g.range(-127, 126)) + 0.5f) * unit;
        break;
      }
      case 3:  // zeros, negative zeros, one negative maximum
        for (int64_t j = 0; j < bs; ++j) xb[j] = (j % 3 == 0) ? -0.0f : 0.0f;
        if (g.range(0, 1) == 1) xb[g.range(0, static_cast<int>(bs) - 1)] = -2.5f;
        break;
    }
  }
  return x;
}

TEST_P(KernelTableTest, QuantizeRowIsByteIdenticalToReference) {
  Gen g(4321);
  for (DType a : kActivationFormats) {
    const int64_t bs = is_float_format(a) ? 32 : block_size(a);
    for (int kind = 0; kind < 4; ++kind) {
      for (int64_t nb : {1, 2, 3, 16, 33}) {
        const int64_t n = nb * bs + (is_float_format(a) ? nb % 3 : 0);  // float rows: ragged tails
        const std::vector<float> x = quantizer_input(kind, n - n % bs, bs, g);
        std::vector<float> xn(x);
        xn.resize(static_cast<size_t>(n), 0.25f);
        const uint64_t bytes = dtype_row_bytes(a, n);
        Bytes want(bytes), got(bytes);
        scalar::table().quantize_row[id(a)](xn.data(), want.data(), n);
        table().quantize_row[id(a)](xn.data(), got.data(), n);
        for (uint64_t i = 0; i < bytes; ++i) {
          ASSERT_EQ(got.data()[i], want.data()[i])
              << table().isa << " " << dtype_name(a) << " kind " << kind << " n=" << n << " byte " << i;
        }
      }
    }
  }
}

// to_float (what attention reads of an F16 / BF16 / quantized KV cache): exact conversions, so the
// same bits as the scalar reference. F16 and BF16: all 65536 values, at every offset of a row (SIMD
// bodies and scalar tails); the block formats: random rows.
TEST_P(KernelTableTest, ToFloatIsBitExactWithTheReference) {
  for (DType d : {DType::F16, DType::BF16}) {
    std::vector<uint16_t> all(65536 + 7);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 40503u);  // a permutation of u16
    std::vector<float> want(all.size()), got(all.size());
    for (int64_t n : {int64_t{65536}, int64_t{65543}, int64_t{7}, int64_t{9}, int64_t{17}}) {
      scalar::table().to_float[id(d)](all.data(), want.data(), n);
      table().to_float[id(d)](all.data(), got.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t a, b;
        std::memcpy(&a, &want[static_cast<size_t>(i)], 4);
        std::memcpy(&b, &got[static_cast<size_t>(i)], 4);
        const bool both_nan = std::isnan(want[static_cast<size_t>(i)]) && std::isnan(got[static_cast<size_t>(i)]);
        ASSERT_TRUE(a == b || both_nan) << table().isa << " " << dtype_name(d) << " input 0x" << std::hex
                                        << all[static_cast<size_t>(i)] << " n=" << std::dec << n;
      }
    }
  }
  Gen g(77);
  for (DType d : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::IQ4_NL, DType::Q5_0, DType::Q5_1}) {
    const int64_t n = 32 * 9;
    const std::vector<float> x = quantizer_input(0, n, 32, g);
    Bytes q(dtype_row_bytes(d, n));
    quant_traits(d).from_float_ref(x.data(), q.data(), n);
    std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    scalar::table().to_float[id(d)](q.data(), want.data(), n);
    table().to_float[id(d)](q.data(), got.data(), n);
    ASSERT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * static_cast<size_t>(n)), 0)
        << table().isa << " " << dtype_name(d);
    // Every bit pattern of the quants (random bytes), the scales set to finite halves.
    for (uint64_t i = 0; i < q.size(); ++i) q.data()[i] = static_cast<uint8_t>(g.u32());
    const Format& f = format(d);
    const uint64_t block_bytes = dtype_row_bytes(d, 32);
    for (uint64_t b = 0; b < q.size() / block_bytes; ++b) {
      for (int16_t offset : {f.d_offset, f.min_offset}) {
        if (offset < 0) continue;
        const uint16_t half = f32_to_fp16(0.001f * static_cast<float>(b + 1) * (offset == f.d_offset ? 1.0f : -3.0f));
        std::memcpy(q.data() + b * block_bytes + static_cast<uint64_t>(offset), &half, sizeof(half));
      }
    }
    scalar::table().to_float[id(d)](q.data(), want.data(), n);
    table().to_float[id(d)](q.data(), got.data(), n);
    ASSERT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * static_cast<size_t>(n)), 0)
        << table().isa << " " << dtype_name(d) << " (random quants)";
  }
}

// attn_accumulate (attention's weighted sum of values) against the reference, within f32 rounding
// of sums of up to 200 terms of size ~1 (the order of additions differs): value rows at a stride,
// head sizes with and without SIMD tails.
TEST_P(KernelTableTest, AttnAccumulateMatchesReference) {
  std::mt19937 rng(99);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t dv : {int64_t{8}, int64_t{40}, int64_t{64}, int64_t{72}, int64_t{128}, int64_t{256}}) {
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{200}}) {
      const int64_t stride = dv + 5;
      std::vector<float> v(static_cast<size_t>(n * stride)), w(static_cast<size_t>(n)), acc(static_cast<size_t>(dv));
      for (float& x : v) x = dist(rng);
      for (float& x : w) x = std::fabs(dist(rng));
      for (float& x : acc) x = dist(rng);
      std::vector<float> want(acc), got(acc);
      scalar::table().attn_accumulate(want.data(), w.data(), v.data(), stride, n, dv);
      table().attn_accumulate(got.data(), w.data(), v.data(), stride, n, dv);
      for (int64_t d = 0; d < dv; ++d) {
        ASSERT_NEAR(got[static_cast<size_t>(d)], want[static_cast<size_t>(d)], 2e-5 * (1 + std::sqrt(double(n))))
            << table().isa << " dv " << dv << " n " << n << " d " << d;
      }
    }
  }
}

// gemm[F16] is what attention scores an F16 cache's keys with: a query's scores must not depend on
// how many other queries share the call (a prompt's tokens, or one decoded token), or a token's
// output would change with the batch it was evaluated in. Every tile shape around the kernels'
// row and token blockings, head sizes with tails, Inf among the keys.
TEST_P(KernelTableTest, F16GemmGivesEveryTokenItsOneTokenBits) {
  const GemmFn gemm = table().gemm[id(DType::F16)];
  if (gemm == nullptr) GTEST_SKIP() << table().isa << " has no F16 gemm";
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t n : {int64_t{7}, int64_t{48}, int64_t{64}, int64_t{100}, int64_t{128}}) {
    for (int64_t rows : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{9}, int64_t{17}}) {
      for (int64_t tokens : {int64_t{2}, int64_t{3}, int64_t{5}, int64_t{8}}) {
        std::vector<uint16_t> w(static_cast<size_t>(rows * n)), a(static_cast<size_t>(tokens * n));
        for (uint16_t& x : w) x = f32_to_fp16(dist(rng));
        for (uint16_t& x : a) x = f32_to_fp16(dist(rng));
        if (rows > 2) w[static_cast<size_t>(2 * n + n / 2)] = 0x7C00;  // +Inf in row 2
        const auto* wb = reinterpret_cast<const uint8_t*>(w.data());
        const auto* ab = reinterpret_cast<const uint8_t*>(a.data());
        std::vector<float> all(static_cast<size_t>(tokens * rows)), one(static_cast<size_t>(rows));
        gemm(n, wb, 2 * n, rows, ab, 2 * n, tokens, all.data(), rows);
        for (int64_t t = 0; t < tokens; ++t) {
          gemm(n, wb, 2 * n, rows, ab + 2 * n * t, 2 * n, 1, one.data(), rows);
          for (int64_t r = 0; r < rows; ++r) {
            const float x = all[static_cast<size_t>(t * rows + r)], y = one[static_cast<size_t>(r)];
            ASSERT_TRUE(float_bits(x) == float_bits(y) || (std::isnan(x) && std::isnan(y)))
                << table().isa << " n " << n << " rows " << rows << " tokens " << tokens << " cell (" << r << ", " << t
                << "): " << x << " vs one token " << y;
          }
        }
      }
    }
  }
}

// attn_accumulate_rows[V] (values read from the cache in place): the bits of the same table's
// to_float[V] into f32 rows then attn_accumulate, which attention uses when several query rows
// share a tile, so a row's output does not depend on which path served it. Value rows at a byte
// stride, head sizes with SIMD tails, random halves (subnormals among them) and a few Inf / NaN.
TEST_P(KernelTableTest, AttnAccumulateRowsGivesTheBitsOfConvertThenAccumulate) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  int filled = 0;
  for (uint32_t type = 0; type < kDTypeCount; ++type) {
    const kernels::AttnAccumulateRowsFn rows_fn = table().attn_accumulate_rows[type];
    if (rows_fn == nullptr) continue;
    ++filled;
    const DType d = static_cast<DType>(type);
    for (int64_t dv : {int64_t{4}, int64_t{8}, int64_t{40}, int64_t{48}, int64_t{64}, int64_t{75}, int64_t{128}}) {
      for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{200}}) {
        for (bool specials : {false, true}) {
          const uint64_t row_bytes = dtype_row_bytes(d, dv) + 6;
          Bytes v(static_cast<uint64_t>(n) * row_bytes);
          std::vector<float> row(static_cast<size_t>(dv));
          for (int64_t j = 0; j < n; ++j) {
            for (float& x : row) x = dist(rng) * (rng() % 8 == 0 ? 1e-6f : 1.0f);  // some subnormal halves
            quant_traits(d).from_float_ref(row.data(), v.data() + static_cast<uint64_t>(j) * row_bytes, dv);
          }
          if (specials && d == DType::F16) {
            const uint16_t inf = 0x7C00, nan = 0x7E01;
            std::memcpy(v.data() + 2 * (dv / 2), &inf, 2);
            std::memcpy(v.data() + static_cast<uint64_t>(n - 1) * row_bytes, &nan, 2);
          }
          std::vector<float> w(static_cast<size_t>(n)), acc(static_cast<size_t>(dv));
          for (float& x : w) x = std::fabs(dist(rng));
          for (float& x : acc) x = dist(rng);
          std::vector<float> values(static_cast<size_t>(n * dv));
          for (int64_t j = 0; j < n; ++j) {
            table().to_float[type](v.data() + static_cast<uint64_t>(j) * row_bytes, values.data() + j * dv, dv);
          }
          std::vector<float> want(acc), got(acc);
          table().attn_accumulate(want.data(), w.data(), values.data(), dv, n, dv);
          rows_fn(got.data(), w.data(), v.data(), row_bytes, n, dv);
          for (int64_t k = 0; k < dv; ++k) {
            const float a = want[static_cast<size_t>(k)], b = got[static_cast<size_t>(k)];
            ASSERT_TRUE(float_bits(a) == float_bits(b) || (std::isnan(a) && std::isnan(b)))
                << table().isa << " " << dtype_name(d) << " dv " << dv << " n " << n << " column " << k << ": " << b
                << " vs " << a;
          }
        }
      }
    }
  }
  if (std::string(table().isa).rfind("simd128", 0) == 0) EXPECT_GT(filled, 0) << "SIMD128 reads F16 values in place";
}

// attn_softmax: the same weights, bit for bit, as the reference (scaling, max and exp_bounded are
// each one rounding in a fixed order); the sum within float rounding; the running maximum kept
// when the tile's is smaller; very negative scores clamp to e^-87.
TEST_P(KernelTableTest, AttnSoftmaxGivesTheReferenceWeights) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 8.0f);
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{64}, int64_t{67}}) {
    for (float start_max : {-INFINITY, 0.0f, 100.0f}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = dist(rng);
      x[0] = -1000.0f;
      std::vector<float> want(x), got(x);
      float want_max = start_max, got_max = start_max;
      const float want_sum = scalar::table().attn_softmax(want.data(), n, 0.125f, &want_max);
      const float got_sum = table().attn_softmax(got.data(), n, 0.125f, &got_max);
      EXPECT_EQ(got_max, want_max) << table().isa << " n " << n;
      ASSERT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * static_cast<size_t>(n)), 0)
          << table().isa << " n " << n << " start " << start_max;
      EXPECT_NEAR(got_sum, want_sum, 1e-6 * (1 + want_sum)) << table().isa << " n " << n;
    }
  }
}

// ---- the tables themselves

// Every KV cache type: attention reads V through to_float, a tile of positions at a time.
TEST_P(KernelTableTest, SimdTablesConvertKvCacheTypesThemselves) {
  if (std::string(table().isa) == "scalar") GTEST_SKIP() << "the reference itself";
  for (DType d : {DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::IQ4_NL, DType::Q5_0,
                  DType::Q5_1}) {
    EXPECT_NE(table().to_float[id(d)], scalar::table().to_float[id(d)]) << table().isa << " " << dtype_name(d);
  }
}

// The formats this platform's SIMD tables have no kernels for yet: they would run the scalar
// reference there (README's formats table, scripts/formats-table). Empty today on x86, wasm and
// aarch64; a new format starts here (under #if per platform) and leaves as each platform's kernels land.
bool awaits_simd_kernels(DType w) {
  const std::vector<DType> pending = {};
  return std::find(pending.begin(), pending.end(), w) != pending.end();
}

TEST_P(KernelTableTest, SimdTablesOverrideEveryWeightFormat) {
  const KernelTable& ref = scalar::table();
  for (DType w : kWeightFormats) ASSERT_NE(ref.vec_dot[id(w)], nullptr) << dtype_name(w);
  if (std::string(table().isa) == "scalar") return;
  for (DType w : kWeightFormats) {
    // The internal layouts (Q4_K_IL, Q6_K_IL) go through gemm only, on the tables that ask for them.
    if (!dtype_is_known(id(w))) continue;
    if (awaits_simd_kernels(w)) {
      EXPECT_EQ(table().vec_dot[id(w)], ref.vec_dot[id(w)]) << dtype_name(w) << " has kernels now: drop it from the list";
      continue;
    }
    EXPECT_NE(table().vec_dot[id(w)], ref.vec_dot[id(w)]) << table().isa << " leaves " << dtype_name(w) << " scalar";
  }
  for (DType a : {DType::Q8_0, DType::Q8_1, DType::Q8_K}) {
    EXPECT_NE(table().quantize_row[id(a)], ref.quantize_row[id(a)]) << table().isa << " " << dtype_name(a);
  }
}

// A table that has weights converted at load (KernelTable::relayout) multiplies the layout it asks
// for with a tile kernel, and the conversion keeps the bytes per block.
TEST_P(KernelTableTest, RelayoutsLeadToLayoutsWithGemm) {
  for (uint32_t w = 0; w < kDTypeCount; ++w) {
    const Relayout& r = table().relayout[w];
    if (r.fn == nullptr) continue;
    EXPECT_NE(table().gemm[id(r.to)], nullptr) << table().isa << ": " << dtype_name(r.to);
    EXPECT_EQ(dtype_facts(r.to).type_size, dtype_facts(static_cast<DType>(w)).type_size);
    EXPECT_EQ(dtype_facts(r.to).block_size, dtype_facts(static_cast<DType>(w)).block_size);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelTableTest, ::testing::ValuesIn(all_kernels()), table_param_name);

bool has_table(const char* isa) {
  for (const KernelTable* t : all_kernels()) {
    if (std::string(t->isa) == isa) return true;
  }
  return false;
}

// Emscripten's CMake toolchain reports an x86 processor: a build that picked kernels from it
// would silently run scalar code in the browser. This fails such a build.
TEST(KernelSelection, BestTableIsThePlatformsSimdTable) {
  const std::string best = best_kernels().isa;
  EXPECT_EQ(std::string(all_kernels().front()->isa), "scalar");
#if defined(__EMSCRIPTEN__)
  // "simd128+relaxed" in the relaxed-SIMD copy of the module (simd128_relaxed_test.cpp)
  EXPECT_TRUE(best == "simd128" || best == "simd128+relaxed") << best;
  EXPECT_TRUE(has_table(best.c_str()));
#elif defined(__aarch64__)
  EXPECT_TRUE(has_table("neon"));
#if defined(__linux__)
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0) {
    EXPECT_TRUE(has_table("neon-dotprod"));
    EXPECT_EQ(best, "neon-dotprod");
  }
#endif
#elif defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_TRUE(has_table("avx2"));
    EXPECT_NE(best, "scalar");
  }
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512vnni")) {
    EXPECT_EQ(best, "avx512");
  }
#endif
}

TEST(KernelSelection, TablesCanBeChosenByName) {
  for (const KernelTable* t : all_kernels()) {
    Result<const KernelTable*> r = kernels_by_name(t->isa);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), t);
  }
  EXPECT_FALSE(kernels_by_name("no-such-isa").ok());
}

}  // namespace
}  // namespace ox::kernels
