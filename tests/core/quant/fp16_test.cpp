// fp16 / bf16 conversions: every half value decodes as IEEE defines it, and float -> half/bf16
// rounds to nearest even with the edge cases (subnormals, overflow, NaN) right.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "core/quant/traits.h"
#include "tests/core/quant/quant_test_util.h"

namespace ox {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Fp16, EveryHalfDecodesAsIeeeDefines) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = test::half_value(static_cast<uint16_t>(h));
    const float got = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = f32_to_fp16(fp16_to_f32(static_cast<uint16_t>(h)));
    if (((h >> 10) & 31) == 31 && (h & 1023) != 0) {
      EXPECT_TRUE((back & 0x7C00) == 0x7C00 && (back & 0x3FF) != 0) << h;  // still a NaN
    } else {
      EXPECT_EQ(back, h);
    }
  }
}

TEST(Fp16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa (1.0).
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);  // just above the tie rounds up
  EXPECT_EQ(f32_to_fp16(0.1f), 0x2E66);  // 0.0999755859375
}

TEST(Fp16, OverflowAndSpecials) {
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65519.996f), 0x7BFF);  // below the midpoint to 65536
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);    // the midpoint ties to "even" = Inf
  EXPECT_EQ(f32_to_fp16(1e30f), 0x7C00);
  EXPECT_EQ(f32_to_fp16(-1e30f), 0xFC00);
  EXPECT_EQ(f32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(f32_to_fp16(-INFINITY), 0xFC00);
  const uint16_t nan = f32_to_fp16(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x3FF, 0);
  // A NaN whose payload sits only in the low bits must not become Inf.
  const uint16_t low_nan = f32_to_fp16(from_bits(0x7F800001u));
  EXPECT_NE(low_nan & 0x3FF, 0);
  EXPECT_TRUE(std::isinf(fp16_to_f32(0x7C00)));
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
}

TEST(Fp16, Subnormals) {
  EXPECT_EQ(f32_to_fp16(0x1p-14f), 0x0400);       // smallest normal
  EXPECT_EQ(f32_to_fp16(0x1p-24f), 0x0001);       // smallest subnormal
  EXPECT_EQ(f32_to_fp16(0x1p-25f), 0x0000);       // halfway to 2^-24: ties to even 0
  EXPECT_EQ(f32_to_fp16(0x1.000002p-25f), 0x0001);  // just above halfway
  EXPECT_EQ(f32_to_fp16(3 * 0x1p-25f), 0x0002);   // 1.5 units: ties to even 2
  EXPECT_EQ(f32_to_fp16(5 * 0x1p-25f), 0x0002);   // 2.5 units: ties to even 2
  EXPECT_EQ(f32_to_fp16(-0x1p-24f), 0x8001);
  EXPECT_EQ(f32_to_fp16(0x1p-15f), 0x0200);
  EXPECT_EQ(f32_to_fp16(0x1.ff8p-15f), 0x03FF);   // largest subnormal, 1023 * 2^-24
  EXPECT_EQ(f32_to_fp16(0x1.ffcp-15f), 0x0400);   // 1023.5 units ties to even: the smallest normal
  EXPECT_EQ(f32_to_fp16(1e-30f), 0x0000);
  EXPECT_EQ(f32_to_fp16(from_bits(1)), 0x0000);   // float denormal
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_f32(0x83FF), -0x1.ff8p-15f);
}

TEST(Bf16, Conversions) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(f32_to_bf16(1e30f), 0x714A);                    // 1e30 = 0x7149F2CA rounds up
  EXPECT_EQ(f32_to_bf16(from_bits(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds past the largest bf16
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  const uint16_t nan = f32_to_bf16(from_bits(0x7F800001u));  // low-payload NaN stays NaN
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x7F, 0);
  EXPECT_EQ(f32_to_bf16(from_bits(0x00000001u)), 0x0000);  // denormal rounds to 0
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000u)), 0x0002);  // denormal tie to even
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0x0001), from_bits(0x00010000u));
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(f32_to_bf16(f), h);
    }
  }
}

}  // namespace
}  // namespace ox
