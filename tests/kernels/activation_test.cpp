// KernelTable::silu_mul of every table against the scalar reference, bit for bit: SwiGLU runs on
// every token of a prompt, and a model's output must not depend on the CPU's vector width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/base/activation.h"
#include "tests/kernels/kernel_test_fixture.h"

namespace ox::kernels {
namespace {

// y finite and non-zero: inf * 0 would be NaN, whose bits IEEE leaves to the hardware.
std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// n values: uniform in [-200, 200] (past both clamps of e^-v, at -87 and 88) alternating with
// normal ones (where silu is curved, not ~0 or ~v), and every 5th one special: +-0, values at and
// near the clamps, +-inf, denormals.
std::vector<float> activation_inputs(int64_t n, uint32_t seed) {
  constexpr float kSpecial[] = {0.0f,     -0.0f,     87.0f,  -88.0f,  87.5f,  -88.5f,
                                INFINITY, -INFINITY, 1e-40f, -1e-40f, 1e-30f, -200.0f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(-200.0f, 200.0f);
  std::normal_distribution<float> narrow(0.0f, 4.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 5 == 4) {
      v[i] = kSpecial[rng() % std::size(kSpecial)];
    } else {
      v[i] = i % 2 == 0 ? wide(rng) : narrow(rng);
    }
  }
  return v;
}

// Runs table.silu_mul and the reference on copies of x; the first differing element, if any.
void expect_reference_bits(const KernelTable& table, const std::vector<float>& x, const std::vector<float>& y) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> want = x, got = x;
  silu_mul_ref(want.data(), y.data(), n);
  table.silu_mul(got.data(), y.data(), n);
  if (std::memcmp(got.data(), want.data(), sizeof(float) * x.size()) == 0) return;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(float_bits(got[i]), float_bits(want[i])) << table.isa << " n=" << n << " i=" << i << " x=" << x[i]
                                                 << " y=" << y[i] << " got " << got[i] << " want " << want[i];
  }
}

TEST_P(KernelTableTest, SiluMulMatchesScalarReferenceBitForBit) {
  ASSERT_NE(table().silu_mul, nullptr) << table().isa;
  // Lengths around the 8- and 16-lane steps so both the vector body and the tail run.
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 63, 1000, 4099}) {
    const uint32_t seed = static_cast<uint32_t>(n);
    expect_reference_bits(table(), activation_inputs(n, seed), gaussian(static_cast<size_t>(n), seed + 1000));
  }
}

// Every 2^11th float of |v| < 90, about a million values spread evenly over each binade: a single
// reordered or fused step of the exp polynomial changes some results' last bit, but only a few per
// million, which a random sample can miss.
std::vector<float> whole_range() {
  std::vector<float> x;
  for (uint32_t b = 0; b < float_bits(90.0f); b += 1u << 11) {
    float v;
    std::memcpy(&v, &b, 4);
    x.push_back(v);
    x.push_back(-v);
  }
  return x;
}

TEST_P(KernelTableTest, SiluMulMatchesScalarReferenceOverTheWholeRange) {
  const std::vector<float> x = whole_range();
  expect_reference_bits(table(), x, gaussian(x.size(), 7));
}

// KernelTable::gelu (BERT's feed-forward) against gelu_ref, bit for bit: the same random and
// special inputs at lengths around the vector steps, then every 2^11th float of |v| < 90.
void expect_gelu_reference_bits(const KernelTable& table, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> want = x, got = x;
  gelu_ref(want.data(), n);
  table.gelu(got.data(), n);
  if (std::memcmp(got.data(), want.data(), sizeof(float) * x.size()) == 0) return;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
    ASSERT_TRUE(both_nan || float_bits(got[i]) == float_bits(want[i]))
        << table.isa << " n=" << n << " i=" << i << " x=" << x[i] << " got " << got[i] << " want " << want[i];
  }
}

TEST_P(KernelTableTest, GeluMatchesScalarReferenceBitForBit) {
  ASSERT_NE(table().gelu, nullptr) << table().isa;
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 63, 1000, 4099}) {
    expect_gelu_reference_bits(table(), activation_inputs(n, static_cast<uint32_t>(n) + 77));
    if (HasFatalFailure()) return;
  }
  expect_gelu_reference_bits(table(), whole_range());
}

}  // namespace
}  // namespace ox::kernels
