// MXFP4's gemm and vec_dot of every table on the exponent bytes at both ends of E8M0 (0 and 1 give
// subnormal scales, 254 and 255 the largest, 255 being E8M0's NaN read as 2^127) mixed with
// ordinary ones in every row and every decode lane. kernels_test.cpp's random rows cannot reach
// 254 / 255: its activation scales would overflow f32; here they are kept at 2^-24..2^-20.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/quant/blocks.h"
#include "core/quant/traits.h"
#include "tests/kernels/kernel_test_fixture.h"

namespace ox::kernels {
namespace {

constexpr uint8_t kMxfp4Exponents[] = {0, 1, 2, 120, 128, 253, 254, 255};
constexpr uint16_t kTinyActScales[] = {0x0001, 0x0007, 0x0010, 0x0013};  // fp16 subnormals, 2^-24..2^-20

struct Mxfp4Rows {
  std::vector<BlockMXFP4> w;  // n_rows x nb
  std::vector<BlockQ8_0> a;   // n_tokens x nb
};

Mxfp4Rows mxfp4_rows(int64_t nb, int64_t n_rows, int64_t n_tokens, std::mt19937& rng) {
  Mxfp4Rows m{std::vector<BlockMXFP4>(static_cast<size_t>(nb * n_rows)),
              std::vector<BlockQ8_0>(static_cast<size_t>(nb * n_tokens))};
  for (size_t i = 0; i < m.w.size(); ++i) {
    // Block i cycles through the exponents with a per-row shift, so the four rows of a decode
    // group hold different extremes in the same block.
    m.w[i].e = kMxfp4Exponents[(i + i / static_cast<size_t>(nb)) % sizeof(kMxfp4Exponents)];
    for (uint8_t& q : m.w[i].qs) q = static_cast<uint8_t>(rng());
  }
  for (BlockQ8_0& b : m.a) {
    b.d = kTinyActScales[rng() % 4];
    for (int8_t& q : b.qs) q = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  }
  return m;
}

// sum |term| over the row in double (dequantize() cannot: 12 * 2^127 is past f32), and the
// kernels_test.cpp tolerance for 2 terms per block.
double mxfp4_tolerance(const BlockMXFP4* w, const BlockQ8_0* a, int64_t nb) {
  double mag = 0.0;
  for (int64_t b = 0; b < nb; ++b) {
    double isum = 0.0;
    for (int j = 0; j < 32; ++j) {
      const int code = j < 16 ? (w[b].qs[j] & 0xF) : (w[b].qs[j - 16] >> 4);
      isum += std::fabs(static_cast<double>(kMXFP4Values[code]) * a[b].qs[j]);
    }
    mag += isum * std::ldexp(1.0, w[b].e - 128) * static_cast<double>(ox::fp16_to_f32(a[b].d));
  }
  const double terms = 2.0 * static_cast<double>(nb);
  return (2.0 * terms + 16.0) * 0x1p-24 * mag + (terms + 16.0) * 0x1p-149;
}

TEST_P(KernelTableTest, Mxfp4ExtremeExponentsMatchTheReference) {
  const uint32_t id = static_cast<uint32_t>(DType::MXFP4);
  const VecDotFn ref = scalar::table().vec_dot[id];
  std::mt19937 rng(2027);
  for (int64_t nb : {1, 3, 9}) {
    for (int64_t n_rows : {1, 4, 5, 9}) {
      for (int64_t n_tokens : {1, 2, 4, 9}) {  // 1-2: the decode loops; 4, 9: the prefill tiles
        const Mxfp4Rows m = mxfp4_rows(nb, n_rows, n_tokens, rng);
        std::vector<float> y(static_cast<size_t>(n_rows * n_tokens), std::nanf(""));
        if (table().gemm[id] != nullptr) {
          table().gemm[id](nb * 32, reinterpret_cast<const uint8_t*>(m.w.data()), nb * sizeof(BlockMXFP4), n_rows,
                           reinterpret_cast<const uint8_t*>(m.a.data()), nb * sizeof(BlockQ8_0), n_tokens, y.data(),
                           n_rows);
        }
        for (int64_t t = 0; t < n_tokens; ++t) {
          for (int64_t r = 0; r < n_rows; ++r) {
            const BlockMXFP4* w = m.w.data() + r * nb;
            const BlockQ8_0* a = m.a.data() + t * nb;
            float want = 0.0f, dot = 0.0f;
            ref(nb * 32, &want, w, a);
            table().vec_dot[id](nb * 32, &dot, w, a);
            ASSERT_TRUE(std::isfinite(want)) << "the case itself overflows";
            const double tol = mxfp4_tolerance(w, a, nb);
            const std::string where = std::string(table().isa) + " nb=" + std::to_string(nb) + " rows=" +
                                      std::to_string(n_rows) + " tokens=" + std::to_string(n_tokens) + " cell (" +
                                      std::to_string(r) + ", " + std::to_string(t) + ")";
            ASSERT_NEAR(dot, want, tol) << where << " vec_dot";
            if (table().gemm[id] != nullptr) {
              ASSERT_NEAR(y[static_cast<size_t>(t * n_rows + r)], want, tol) << where << " gemm";
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ox::kernels
