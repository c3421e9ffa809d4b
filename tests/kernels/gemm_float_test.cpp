// gemm[F32] of every table that has one against that table's own vec_dot_f32, bit for bit: the tile
// kernels (kernels/x86/gemm_float_tile.h) promise vec_dot's operations per cell, so a prompt in one
// batch and one token at a time give the same logits. (Closeness to the scalar reference is
// kernels_test.cpp's GemmMatchesReferenceOnEveryTileShape.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/kernels/kernel_test_fixture.h"

namespace ox::kernels {
namespace {

TEST_P(KernelTableTest, F32GemmGivesVecDotBits) {
  const GemmFn gemm = table().gemm[static_cast<uint32_t>(DType::F32)];
  if (gemm == nullptr) GTEST_SKIP() << table().isa << " has no gemm[F32]";
  const VecDotFn dot = table().vec_dot[static_cast<uint32_t>(DType::F32)];
  std::mt19937 rng(99);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  // Lengths around the 8/16-lane steps and the 4-accumulator blocks (32 / 64), a BERT width and a
  // ragged long row; tile shapes around 2 x 3 and 1 x 3 with remainders.
  for (int64_t n : {1, 7, 15, 16, 17, 63, 64, 65, 100, 384, 1000}) {
    for (int64_t rows : {1, 2, 3, 5}) {
      for (int64_t tokens : {1, 2, 3, 4, 7}) {
        const uint64_t w_stride = n * sizeof(float) + 4, a_stride = n * sizeof(float) + 8;
        std::vector<uint8_t> w(w_stride * rows), a(a_stride * tokens);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t k = 0; k < n; ++k) {
            const float v = dist(rng);
            std::memcpy(w.data() + r * w_stride + k * sizeof(float), &v, sizeof(float));
          }
        }
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t k = 0; k < n; ++k) {
            const float v = dist(rng);
            std::memcpy(a.data() + t * a_stride + k * sizeof(float), &v, sizeof(float));
          }
        }
        std::vector<float> y(static_cast<size_t>(rows * tokens));
        gemm(n, w.data(), w_stride, rows, a.data(), a_stride, tokens, y.data(), rows);
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t r = 0; r < rows; ++r) {
            float want;
            dot(n, &want, w.data() + r * w_stride, a.data() + t * a_stride);
            ASSERT_EQ(float_bits(y[static_cast<size_t>(t * rows + r)]), float_bits(want))
                << table().isa << " n=" << n << " rows=" << rows << " tokens=" << tokens << " cell (" << r << ", "
                << t << "): " << y[static_cast<size_t>(t * rows + r)] << " vs vec_dot " << want;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ox::kernels
