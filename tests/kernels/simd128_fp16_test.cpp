// kernels/simd128/util.h fp16x4_to_f32 (the scale conversion of every SIMD128 decode loop) and
// its scalar twin fp16() against ox::fp16_to_f32 on all 65536 half-precision bit patterns,
// subnormals and NaN payloads included. The random-block kernel tests never draw Inf or NaN scales.
// Likewise block32::mxfp4_scales4 (MXFP4's decode scales) against mxfp4_scale on all 256 exponents.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/quant/blocks.h"
#include "core/quant/traits.h"
#include "tests/support/float_bits.h"

#if defined(__wasm_simd128__)
#include "kernels/simd128/block32_impl.h"
#include "kernels/simd128/util.h"
#endif

namespace {

TEST(Simd128Fp16, EveryHalfConvertsToTheScalarReferenceBits) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  namespace simd = ox::kernels::simd128;
  const simd::Fp16Consts opaque = simd::fp16_consts();  // the loop form, constants from out of line
  int mismatches = 0;
  for (uint32_t h = 0; h < 65536; h += 4) {
    const v128_t halves = wasm_i32x4_make(static_cast<int32_t>(h), static_cast<int32_t>(h + 1),
                                          static_cast<int32_t>(h + 2), static_cast<int32_t>(h + 3));
    uint32_t got[3][4];
    wasm_v128_store(got[0], simd::fp16x4_to_f32(halves));
    wasm_v128_store(got[1], simd::fp16x4_to_f32(halves, opaque));
    for (uint32_t k = 0; k < 4; ++k) {
      const float scalar = simd::fp16(static_cast<uint16_t>(h + k));
      std::memcpy(&got[2][k], &scalar, 4);
    }
    static const char* const kForm[3] = {" (inline constants)", " (fp16_consts)", " (scalar fp16)"};
    for (uint32_t k = 0; k < 4; ++k) {
      const float ref = ox::fp16_to_f32(static_cast<uint16_t>(h + k));
      uint32_t want;
      std::memcpy(&want, &ref, 4);
      for (int form = 0; form < 3; ++form) {
        if (got[form][k] != want && ++mismatches <= 8) {
          ADD_FAILURE() << "fp16 0x" << std::hex << (h + k) << ": got 0x" << got[form][k] << ", want 0x" << want
                        << kForm[form];
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
#endif
}

TEST(Simd128Mxfp4, EveryExponentByteConvertsToTheScalarScaleBits) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  for (uint32_t e = 0; e < 256; e += 4) {
    uint32_t got[4];
    wasm_v128_store(got, ox::kernels::simd128::block32::mxfp4_scales4(wasm_i32x4_make(
                             static_cast<int32_t>(e), static_cast<int32_t>(e + 1), static_cast<int32_t>(e + 2),
                             static_cast<int32_t>(e + 3))));
    for (uint32_t k = 0; k < 4; ++k) {
      // 2^(e - 128) in double, then as f32: exact for every e (2^-128 and 2^-127 are f32 subnormals).
      const float want = static_cast<float>(std::ldexp(1.0, static_cast<int>(e + k) - 128));
      EXPECT_EQ(got[k], ox::test::float_bits(want)) << "e = " << (e + k);
      EXPECT_EQ(got[k], ox::test::float_bits(ox::mxfp4_scale(static_cast<uint8_t>(e + k)))) << "e = " << (e + k);
    }
  }
#endif
}

}  // namespace
