// The relaxed-SIMD slots (kernels/simd128/relaxed_slots.h) against the SIMD128 code they stand
// in for. In the plain module the slot runs that same code and the test only checks the call; in
// NAME.relaxed.wasm (ctest's *_relaxed entries, OXIDIZE_WASM_RELAXED=1) it runs the hand-written
// body, which must give the same bits, on random blocks and on the extremes (Q4_K: every nibble 15,
// scales and mins 63; Q5_K: every quant 31, scales and mins 63; Q6_K: every quant 63, scales -128;
// Q8_0: every weight -128, 127 or -127; IQ4_NL: values -127 and 113 against -127 and 127; Q2_K: every quant 3, scales
// and mins 15; Q3_K: every quant 3 with its high bit, scales -32; Q5_0 / Q5_1: every quant 31 or 0,
// scales 65504 and 2^-24; every activation -128, or 127) where an i16 lane or a saturating pair
// would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/quant/blocks.h"
#include "core/quant/interleave.h"
#include "core/quant/reference.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

#if defined(__wasm_simd128__)
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/interleave.h"
#include "kernels/simd128/iquant_impl.h"
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/rows2_q2_q3.h"
#include "kernels/simd128/util.h"
#endif

namespace {

#if defined(__wasm_simd128__)
namespace simd = ox::kernels::simd128;

bool relaxed_wanted() {
  const char* v = std::getenv("OXIDIZE_WASM_RELAXED");
  return v != nullptr && std::string(v) == "1";
}

// A finite fp16 scale of either sign: a third of them zero or subnormal (exponent 0), as most
// Q6_K scales of real models are, the rest normal up to 2 (exponent 1..16).
uint16_t half_scale(std::mt19937& rng) {
  std::uniform_int_distribution<int> exponent(-8, 16), mantissa(0, 0x3FF), sign(0, 1);
  const int e = std::max(0, exponent(rng));
  return static_cast<uint16_t>(sign(rng) << 15 | e << 10 | mantissa(rng));
}

// Q4_K rows of nb super-blocks: random bytes, d and dmin finite (half_scale); `extreme`: every
// quant 15 and every 6-bit scale and min 63.
std::vector<ox::BlockQ4_K> q4_k_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ4_K> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (ox::BlockQ4_K& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = extreme ? 0xFF : static_cast<uint8_t>(byte(rng));
    b.d = half_scale(rng);
    b.dmin = half_scale(rng);
  }
  return out;
}

// Q5_K rows: random bytes, d and dmin finite (half_scale); `extreme`: every quant 31 and every
// 6-bit scale and min 63.
std::vector<ox::BlockQ5_K> q5_k_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ5_K> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (ox::BlockQ5_K& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = extreme ? 0xFF : static_cast<uint8_t>(byte(rng));
    b.d = half_scale(rng);
    b.dmin = half_scale(rng);
  }
  return out;
}

// Q6_K rows: random bytes (int8 scales of either sign), d finite (half_scale); `extreme`: every
// quant 63 and every scale -128.
std::vector<ox::BlockQ6_K> q6_k_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ6_K> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (ox::BlockQ6_K& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = extreme ? 0xFF : static_cast<uint8_t>(byte(rng));
    if (extreme) std::memset(b.scales, 0x80, sizeof(b.scales));
    b.d = half_scale(rng);
  }
  return out;
}

// IQ4_XS rows: random bytes, d finite (half_scale); `extreme`: blocks alternately every nibble 0
// (value -127) with every scale 0 (ls - 32 = -32) and every nibble 15 (113) with every scale 63 (31).
std::vector<ox::BlockIQ4_XS> iq4_xs_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockIQ4_XS> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < out.size(); ++i) {
    auto* p = reinterpret_cast<uint8_t*>(&out[i]);
    for (size_t j = 0; j < sizeof(out[i]); ++j) p[j] = extreme ? (i % 2 == 0 ? 0x00 : 0xFF) : static_cast<uint8_t>(byte(rng));
    out[i].d = half_scale(rng);
  }
  return out;
}

// One token's Q8_K activations with consistent bsums; `extreme`: every quant -128.
std::vector<ox::BlockQ8_K> q8_k_row(int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ8_K> out(static_cast<size_t>(nb));
  std::uniform_int_distribution<int> q(-128, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  for (ox::BlockQ8_K& b : out) {
    b.d = scale(rng);
    for (int i = 0; i < ox::kQK_K; ++i) b.qs[i] = static_cast<int8_t>(extreme ? -128 : q(rng));
    for (int j = 0; j < ox::kQK_K / 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += b.qs[16 * j + i];
      b.bsums[j] = static_cast<int16_t>(sum);
    }
  }
  return out;
}
#endif

TEST(Simd128Relaxed, ModuleIsTheOneAskedFor) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const std::string isa = ox::kernels::best_kernels().isa;
  if (relaxed_wanted()) {
    EXPECT_TRUE(simd::relaxed_active()) << "OXIDIZE_WASM_RELAXED=1 but the slots run their SIMD128 bodies";
    EXPECT_EQ(isa, "simd128+relaxed");
  } else {
    EXPECT_EQ(isa, simd::relaxed_active() ? "simd128+relaxed" : "simd128");
  }
#endif
}

#if defined(__wasm_simd128__)
// The slot `slot` against `rows2` (the C++ it stands in for) over shapes and both kinds of data.
template <typename Block, typename MakeRows, typename Rows2, typename Slot>
void expect_pairs_match(MakeRows make_rows, Rows2 rows2, Slot slot, unsigned seed) {
  std::mt19937 rng(seed);
  for (const bool extreme : {false, true}) {
    for (const int nb : {1, 3, 8}) {
      for (const int pairs : {1, 5, 16}) {
        const std::vector<Block> w = make_rows(2 * pairs, nb, extreme, rng);
        const std::vector<ox::BlockQ8_K> y = q8_k_row(nb, extreme, rng);
        const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K;
        const v128_t* act = simd::gemm::split_acts_q8_k(n, reinterpret_cast<const uint8_t*>(y.data()));
        std::vector<float> want(2 * pairs), got(2 * pairs, -1.0f);
        for (int r = 0; r < pairs; ++r) {
          rows2(nb, &w[static_cast<size_t>(r) * nb], &w[static_cast<size_t>(r + pairs) * nb], y.data(), act,
                simd::kquant::opaque_consts(), simd::fp16_consts(), &want[r], &want[r + pairs]);
        }
        slot(nb, reinterpret_cast<const uint8_t*>(w.data()), static_cast<uint32_t>(nb * sizeof(Block)), pairs, y.data(),
             act, simd::relaxed_constants, got.data());
        for (int r = 0; r < 2 * pairs; ++r) {
          uint32_t a, b;
          std::memcpy(&a, &want[r], 4);
          std::memcpy(&b, &got[r], 4);
          EXPECT_EQ(a, b) << (extreme ? "extreme" : "random") << " nb " << nb << " pairs " << pairs << " row " << r
                          << ": SIMD128 " << want[r] << ", slot " << got[r];
        }
      }
    }
  }
}
#endif

TEST(Simd128Relaxed, Q4KPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockQ4_K>(q4_k_rows, simd::kquant::rows2_q4_k, simd::q4_k_pairs, 1234);
#endif
}

TEST(Simd128Relaxed, Q5KPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockQ5_K>(q5_k_rows, simd::kquant::rows2_q5_k, simd::q5_k_pairs, 5678);
#endif
}

TEST(Simd128Relaxed, Q6KPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockQ6_K>(q6_k_rows, simd::kquant::rows2_q6_k, simd::q6_k_pairs, 4321);
#endif
}

// Against activations of every byte (random) and every -128 (extreme): the relaxed body's p - 128 n
// at its largest (-127 * -128 twice per pair) and the scales at both ends.
TEST(Simd128Relaxed, Iq4XsPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockIQ4_XS>(iq4_xs_rows, simd::kquant::rows2_iq4_xs, simd::iq4_xs_pairs, 8765);
#endif
}

#if defined(__wasm_simd128__)
// An interleaved layout's slot (Q4_K_IL, Q6_K_IL) against `want` (the C++ it must match, given the
// rows in natural order and the activations in Q8_K order) on the same shapes and data as above:
// the rows are converted by the scalar reference (quant::*_to_il), the activations by `acts`.
template <typename Block, typename MakeRows, typename Want>
void expect_il_pairs_match(MakeRows make_rows, void (*to_il)(void*, int64_t), Want want_fn,
                           const ox::BlockQ8_K* (*acts)(int64_t, const uint8_t*), simd::PairsIlFn slot, unsigned seed) {
  std::mt19937 rng(seed);
  for (const bool extreme : {false, true}) {
    for (const int nb : {1, 3, 8}) {
      for (const int pairs : {1, 5, 16}) {
        const std::vector<Block> natural = make_rows(2 * pairs, nb, extreme, rng);
        std::vector<Block> il = natural;
        to_il(il.data(), static_cast<int64_t>(il.size()));
        const std::vector<ox::BlockQ8_K> y = q8_k_row(nb, extreme, rng);
        const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K;
        const std::vector<float> want = want_fn(nb, pairs, natural, y);
        const ox::BlockQ8_K* y_il = acts(n, reinterpret_cast<const uint8_t*>(y.data()));
        std::vector<float> got(2 * pairs, -1.0f);
        const auto* w = reinterpret_cast<const uint8_t*>(il.data());
        slot(nb, w, static_cast<uint32_t>(nb * sizeof(Block)), pairs, y.data(), y_il, simd::relaxed_constants, got.data());
        for (int r = 0; r < 2 * pairs; ++r) {
          uint32_t a, b;
          std::memcpy(&a, &want[r], 4);
          std::memcpy(&b, &got[r], 4);
          EXPECT_EQ(a, b) << (extreme ? "extreme" : "random") << " nb " << nb << " pairs " << pairs << " row " << r
                          << ": want " << want[r] << ", slot " << got[r];
        }
      }
    }
  }
}

// What an interleaved slot must give where its SIMD128 stand-in runs rows2 (kquant::rows2_q4_k /
// _q2_k / _q3_k) on the rows in natural order: rows r and r + pairs of w.
template <typename Block, auto rows2>
std::vector<float> rows2_on_natural(int nb, int pairs, const std::vector<Block>& w, const std::vector<ox::BlockQ8_K>& y) {
  const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K;
  const v128_t* act = simd::gemm::split_acts_q8_k(n, reinterpret_cast<const uint8_t*>(y.data()));
  std::vector<float> out(2 * pairs);
  for (int r = 0; r < pairs; ++r) {
    rows2(nb, &w[static_cast<size_t>(r) * nb], &w[static_cast<size_t>(r + pairs) * nb], y.data(), act,
          simd::kquant::opaque_consts(), simd::fp16_consts(), &out[r], &out[r + pairs]);
  }
  return out;
}
#endif

TEST(Simd128Relaxed, Q4KIlPairsMatchRows2OnTheNaturalRows) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_il_pairs_match<ox::BlockQ4_K>(q4_k_rows, ox::quant::q4_k_to_il,
                                       rows2_on_natural<ox::BlockQ4_K, simd::kquant::rows2_q4_k>, simd::acts_q4_k_il,
                                       simd::q4_k_il_pairs, 2468);
#endif
}

TEST(Simd128Relaxed, Q6KIlPairsMatchTheScalarReference) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  auto want = [](int nb, int pairs, const std::vector<ox::BlockQ6_K>& w, const std::vector<ox::BlockQ8_K>& y) {
    const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K;
    std::vector<float> out(2 * pairs);
    for (int r = 0; r < 2 * pairs; ++r) {
      ox::quant_traits(ox::DType::Q6_K).vec_dot_ref(n, &out[r], &w[static_cast<size_t>(r) * nb], y.data());
    }
    return out;
  };
  expect_il_pairs_match<ox::BlockQ6_K>(q6_k_rows, ox::quant::q6_k_to_il, want, simd::acts_q6_k_il, simd::q6_k_il_pairs,
                                       8642);
#endif
}

#if defined(__wasm_simd128__)
// A decode quads slot (q4_0_quads, q8_0_quads) against its float steps written out in scalar code:
// per block the exact integer dot `dot(w, a)`, converted, times (d_row * d_act), added to the row's
// sum in block order (what the SIMD128 and relaxed bodies do in their lanes), both row orders of
// decode_groups. `fill(b, data, rng)` and `fill_act(a, data, rng)` set a block's quants for data
// kind `data` < n_data (0: random).
// `slot` is a QuadsFn, or a callable with QuadsFn's arguments but `k` (iq4_nl_quads' adapter below).
template <typename Block, typename Slot, typename Fill, typename FillAct, typename Dot>
void expect_quads_match(Slot slot, int n_data, Fill fill, FillAct fill_act, Dot dot, unsigned seed) {
  std::mt19937 rng(seed);
  for (int data = 0; data < n_data; ++data) {
    for (const int nb : {1, 3, 8}) {
      for (const int groups : {1, 5, 16}) {
        for (const bool adjacent : {true, false}) {
          const int rows = 4 * groups;
          std::vector<Block> w(static_cast<size_t>(rows) * nb);
          for (Block& b : w) {
            fill(b, data, rng);
            b.d = half_scale(rng);
          }
          std::vector<ox::BlockQ8_0> y(static_cast<size_t>(nb));
          for (ox::BlockQ8_0& b : y) {
            fill_act(b, data, rng);
            b.d = half_scale(rng);
          }
          const int64_t n = static_cast<int64_t>(nb) * 32;
          const simd::gemm::SplitActs act =
              simd::gemm::split_acts_block32(n, reinterpret_cast<const uint8_t*>(y.data()), false);
          std::vector<float> want(static_cast<size_t>(rows), 0.0f), got(static_cast<size_t>(rows), -1.0f);
          for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < nb; ++i) {
              const Block& b = w[static_cast<size_t>(r) * nb + i];
              want[r] += static_cast<float>(dot(b, y[i])) * (ox::fp16_to_f32(b.d) * ox::fp16_to_f32(y[i].d));
            }
          }
          const auto* wb = reinterpret_cast<const uint8_t*>(w.data());
          const auto stride = static_cast<uint32_t>(nb * sizeof(Block));
          if constexpr (std::is_same_v<Slot, simd::QuadsFn>) {
            slot(nb, wb, stride, groups, adjacent ? 4 : 1, adjacent ? 1 : groups, y.data(), act.q, act.d, act.sum,
                 simd::relaxed_constants, got.data());
          } else {
            slot(nb, wb, stride, groups, adjacent ? 4 : 1, adjacent ? 1 : groups, y.data(), act.q, act.d, act.sum,
                 got.data());
          }
          for (int r = 0; r < rows; ++r) {
            uint32_t a, b;
            std::memcpy(&a, &want[r], 4);
            std::memcpy(&b, &got[r], 4);
            EXPECT_EQ(a, b) << "data " << data << " nb " << nb << " groups " << groups
                            << (adjacent ? " adjacent" : " quarters") << " row " << r << ": want " << want[r]
                            << ", slot " << got[r];
          }
        }
      }
    }
  }
}
#endif

#if defined(__wasm_simd128__)
// A U8QuadsFn slot as expect_quads_match's callable: the token's blocks as u8_records with `offset`.
auto u8_quads_adapter(simd::U8QuadsFn slot, int offset) {
  return [slot, offset](int32_t nb, const uint8_t* w, uint32_t stride, int32_t groups, int32_t g_step, int32_t j_step,
                        const ox::BlockQ8_0* y, const v128_t* act_q, const float* d, const int32_t* sum, float* out) {
    const v128_t* records = simd::u8_records(nb, reinterpret_cast<const uint8_t*>(y), d, sum, offset);
    EXPECT_EQ(slot(nb, w, stride, groups, g_step, j_step, records, act_q, d, sum, simd::relaxed_constants, out), groups);
  };
}
#endif

// Q4_0: random data; nibbles 15, activations -128; nibbles 0, activations -128.
TEST(Simd128Relaxed, Q4_0QuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::uniform_int_distribution<int> byte(0, 255);
  auto fill = [&](ox::BlockQ4_0& b, int data, std::mt19937& rng) {
    for (uint8_t& q : b.qs) q = data == 1 ? 0xFF : data == 2 ? 0x00 : static_cast<uint8_t>(byte(rng));
  };
  auto fill_act = [&](ox::BlockQ8_0& b, int data, std::mt19937& rng) {
    for (int8_t& q : b.qs) q = static_cast<int8_t>(data != 0 ? -128 : byte(rng) - 128);
  };
  auto dot = [](const ox::BlockQ4_0& b, const ox::BlockQ8_0& a) {
    int32_t sum = 0;
    for (int l = 0; l < 16; ++l) sum += ((b.qs[l] & 0xF) - 8) * a.qs[l] + ((b.qs[l] >> 4) - 8) * a.qs[l + 16];
    return sum;
  };
  expect_quads_match<ox::BlockQ4_0>(simd::q4_0_quads, 3, fill, fill_act, dot, 1357);
  // q4_0_u8_quads, where it runs: the plain module's SIMD128 body, or the relaxed body where
  // u8_dot_exact holds (the table's choice there: Block32DecodeTakesInfAndNanScales goes through it).
  if (!simd::relaxed_active() || simd::u8_dot_exact()) {
    expect_quads_match<ox::BlockQ4_0>(u8_quads_adapter(simd::q4_0_u8_quads, 8), 3, fill, fill_act, dot, 1358);
  }
#endif
}

// Q8_0: random bytes (-128 included, which a file may hold); every weight -128 against every
// activation -128 (the largest positive pair) and 127; every weight 127 against -128 (the most
// negative); weights -127 and 127 alternating against activations -128 and 127 alternating.
TEST(Simd128Relaxed, Q8_0QuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::uniform_int_distribution<int> byte(-128, 127);
  const int weight[5] = {0, -128, -128, 127, -127}, activation[5] = {0, -128, 127, -128, -128};
  auto fill = [&](ox::BlockQ8_0& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 32; ++l) {
      const int alternate = data == 4 && l % 2 == 1 ? -1 : 1;
      b.qs[l] = static_cast<int8_t>(data == 0 ? byte(rng) : alternate * weight[data]);
    }
  };
  auto fill_act = [&](ox::BlockQ8_0& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 32; ++l) {
      const int q = data == 4 && l % 2 == 1 ? 127 : activation[data];
      b.qs[l] = static_cast<int8_t>(data == 0 ? byte(rng) : q);
    }
  };
  auto dot = [](const ox::BlockQ8_0& b, const ox::BlockQ8_0& a) {
    int32_t sum = 0;
    for (int l = 0; l < 32; ++l) sum += b.qs[l] * a.qs[l];
    return sum;
  };
  expect_quads_match<ox::BlockQ8_0>(simd::q8_0_quads, 5, fill, fill_act, dot, 9753);
#endif
}

#if defined(__wasm_simd128__)
// iq4_nl_quads' activations split by sign, from its contract (relaxed_slots.h): per block |q| of
// elements 0..15 and 16..31, their sign masks, and the sum of the negative quants.
struct Iq4NlSigns {
  std::vector<v128_t> signs;
  std::vector<int32_t> neg_sum;
};
Iq4NlSigns iq4_nl_signs(const ox::BlockQ8_0* y, int nb) {
  Iq4NlSigns s{std::vector<v128_t>(static_cast<size_t>(nb) * 4), std::vector<int32_t>(static_cast<size_t>(nb), 0)};
  for (int i = 0; i < nb; ++i) {
    uint8_t bytes[64];
    for (int l = 0; l < 32; ++l) {
      const int q = y[i].qs[l];
      bytes[l] = static_cast<uint8_t>(q < 0 ? -q : q);
      bytes[32 + l] = q < 0 ? 0xFF : 0x00;
      if (q < 0) s.neg_sum[static_cast<size_t>(i)] += q;
    }
    std::memcpy(&s.signs[static_cast<size_t>(i) * 4], bytes, sizeof(bytes));
  }
  return s;
}
#endif

// IQ4_NL: random bytes against activations -127..127 (the slot's contract leaves out -128); every
// nibble 0 (value -127) against every activation -127 (flipped to 126 against |a| 127, pairs of
// 32004) and 127 (pairs of -32258, the largest an i16 lane holds here); every nibble 15 (113)
// against -127; values -127 and 113 alternating against activations -127 and 127 alternating.
TEST(Simd128Relaxed, Iq4NlQuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::uniform_int_distribution<int> byte(0, 255), quant(-127, 127);
  const int nibble[5] = {0, 0, 0, 15, 0}, activation[5] = {0, -127, 127, -127, -127};
  auto fill = [&](ox::BlockIQ4_NL& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 16; ++l) {  // byte l: elements l (low nibble) and l + 16
      const int v = data == 4 && l % 2 == 1 ? 15 : nibble[data];
      b.qs[l] = data == 0 ? static_cast<uint8_t>(byte(rng)) : static_cast<uint8_t>(v | v << 4);
    }
  };
  auto fill_act = [&](ox::BlockQ8_0& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 32; ++l) {
      const int q = data == 4 && l % 2 == 1 ? 127 : activation[data];
      b.qs[l] = static_cast<int8_t>(data == 0 ? quant(rng) : q);
    }
  };
  auto dot = [](const ox::BlockIQ4_NL& b, const ox::BlockQ8_0& a) {
    int32_t sum = 0;
    for (int l = 0; l < 16; ++l) {
      sum += ox::kIQ4NLValues[b.qs[l] & 0xF] * a.qs[l] + ox::kIQ4NLValues[b.qs[l] >> 4] * a.qs[l + 16];
    }
    return sum;
  };
  auto slot = [](int32_t nb, const uint8_t* w, uint32_t stride, int32_t groups, int32_t g_step, int32_t j_step,
                 const ox::BlockQ8_0* y, const v128_t* act_q, const float* d, const int32_t*, float* out) {
    const Iq4NlSigns s = iq4_nl_signs(y, nb);
    simd::iq4_nl_quads(nb, w, stride, groups, g_step, j_step, s.signs.data(), act_q, d, s.neg_sum.data(),
                       simd::relaxed_constants, out);
  };
  expect_quads_match<ox::BlockIQ4_NL>(slot, 5, fill, fill_act, dot, 4242);
#endif
}

#if defined(__wasm_simd128__)
// got[r] has want[r]'s bits, or is a NaN where want[r] is one (a NaN's payload may differ).
void expect_same_or_both_nan(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  for (size_t r = 0; r < want.size(); ++r) {
    uint32_t a, b;
    std::memcpy(&a, &want[r], 4);
    std::memcpy(&b, &got[r], 4);
    if (std::isnan(want[r])) {
      EXPECT_TRUE(std::isnan(got[r])) << what << " row " << r << ": want NaN, got " << got[r];
    } else {
      EXPECT_EQ(a, b) << what << " row " << r << ": want " << want[r] << ", got " << got[r];
    }
  }
}
#endif

// Q4_0 and IQ4_NL decode through the kernel table (one token) where weight scales hold Inf and NaN:
// the relaxed bodies convert d by a short path that is exact for every finite half and hand a group
// with an exponent-31 scale back to the caller (relaxed_slots.h: QuadsFn), so every row must still
// get the scalar steps' value: the same bits, or a NaN where those give a NaN. Both row orders
// (rows of up to 512 bytes adjacent, longer ones a quarter apart), specials in the first, a middle
// and the last group, and rows past the last whole group of four.
TEST(Simd128Relaxed, Block32DecodeTakesInfAndNanScales) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const ox::kernels::KernelTable& t = ox::kernels::best_kernels();
  std::mt19937 rng(97531);
  std::uniform_int_distribution<int> byte(0, 255);
  auto run = [&](auto block_tag, ox::DType type, auto value) {
    using Block = decltype(block_tag);
    const ox::kernels::GemmFn gemm = t.gemm[static_cast<uint32_t>(type)];
    ASSERT_NE(gemm, nullptr);
    for (const int nb : {2, 40}) {  // 36 and 720 bytes a row: both row orders
      for (const int rows : {8, 22, 64}) {
        std::vector<Block> w(static_cast<size_t>(rows) * nb);
        for (Block& b : w) {
          for (uint8_t& q : b.qs) q = static_cast<uint8_t>(byte(rng));
          b.d = half_scale(rng);
        }
        const uint16_t specials[3] = {0x7C00, 0xFC00, 0x7E01};  // +Inf, -Inf, a NaN
        for (int k = 0; k < 3; ++k) {
          const int r = k == 0 ? 0 : k == 1 ? rows / 2 : rows - 1;
          w[static_cast<size_t>(r) * nb + static_cast<size_t>(byte(rng) % nb)].d = specials[k];
        }
        std::vector<ox::BlockQ8_0> y(static_cast<size_t>(nb));
        for (ox::BlockQ8_0& b : y) {
          for (int8_t& q : b.qs) q = static_cast<int8_t>(byte(rng) - 128);
          b.d = half_scale(rng);
        }
        std::vector<float> want(static_cast<size_t>(rows), 0.0f), got(static_cast<size_t>(rows), -1.0f);
        for (int r = 0; r < rows; ++r) {
          for (int i = 0; i < nb; ++i) {
            const Block& b = w[static_cast<size_t>(r) * nb + i];
            int32_t sum = 0;
            for (int l = 0; l < 16; ++l) sum += value(b.qs[l] & 0xF) * y[i].qs[l] + value(b.qs[l] >> 4) * y[i].qs[l + 16];
            want[r] += static_cast<float>(sum) * (ox::fp16_to_f32(b.d) * ox::fp16_to_f32(y[i].d));
          }
        }
        gemm(static_cast<int64_t>(nb) * 32, reinterpret_cast<const uint8_t*>(w.data()), nb * sizeof(Block), rows,
             reinterpret_cast<const uint8_t*>(y.data()), nb * sizeof(ox::BlockQ8_0), 1, got.data(), rows);
        expect_same_or_both_nan(want, got, std::string(ox::dtype_name(type)) + " nb " + std::to_string(nb) +
                                                " rows " + std::to_string(rows));
      }
    }
  };
  run(ox::BlockQ4_0{}, ox::DType::Q4_0, [](int q) { return q - 8; });
  run(ox::BlockIQ4_NL{}, ox::DType::IQ4_NL, [](int q) { return int{ox::kIQ4NLValues[q]}; });
#endif
}

// Q5_0 and Q5_1 decode through the kernel table (one token) where d or m holds Inf or NaN, as
// Block32DecodeTakesInfAndNanScales: the scalar steps per block are acc + dot * (d * a.d), then for
// Q5_1 + m * s (Q8_1's s), with values nibble + 16 * qh bit (less 16 for Q5_0).
TEST(Simd128Relaxed, Q5DecodeTakesInfAndNanScales) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const ox::kernels::KernelTable& t = ox::kernels::best_kernels();
  std::mt19937 rng(86420);
  std::uniform_int_distribution<int> byte(0, 255);
  auto run = [&](auto block_tag, auto act_tag, ox::DType type) {
    using Block = decltype(block_tag);
    using Act = decltype(act_tag);
    constexpr bool kQ5_1 = std::is_same_v<Block, ox::BlockQ5_1>;
    const ox::kernels::GemmFn gemm = t.gemm[static_cast<uint32_t>(type)];
    ASSERT_NE(gemm, nullptr);
    for (const int nb : {2, 40}) {
      for (const int rows : {8, 22, 64}) {
        std::vector<Block> w(static_cast<size_t>(rows) * nb);
        for (Block& b : w) {
          for (uint8_t& q : b.qs) q = static_cast<uint8_t>(byte(rng));
          for (uint8_t& q : b.qh) q = static_cast<uint8_t>(byte(rng));
          b.d = half_scale(rng);
          if constexpr (kQ5_1) b.m = half_scale(rng);
        }
        const uint16_t specials[3] = {0x7C00, 0xFC00, 0x7E01};
        for (int k = 0; k < 3; ++k) {
          Block& b = w[static_cast<size_t>(k == 0 ? 0 : k == 1 ? rows / 2 : rows - 1) * nb + byte(rng) % nb];
          if constexpr (kQ5_1) {
            (k == 1 ? b.m : b.d) = specials[k];
          } else {
            b.d = specials[k];
          }
        }
        std::vector<Act> y(static_cast<size_t>(nb));
        for (Act& b : y) {
          for (int8_t& q : b.qs) q = static_cast<int8_t>(byte(rng) - 128);
          b.d = half_scale(rng);
          if constexpr (kQ5_1) b.s = half_scale(rng);
        }
        std::vector<float> want(static_cast<size_t>(rows), 0.0f), got(static_cast<size_t>(rows), -1.0f);
        for (int r = 0; r < rows; ++r) {
          for (int i = 0; i < nb; ++i) {
            const Block& b = w[static_cast<size_t>(r) * nb + i];
            uint32_t qh;
            std::memcpy(&qh, b.qh, 4);
            int32_t sum = 0;
            for (int l = 0; l < 32; ++l) {
              const int nibble = l < 16 ? b.qs[l] & 0xF : b.qs[l - 16] >> 4;
              sum += (nibble + 16 * static_cast<int>((qh >> l) & 1) - (kQ5_1 ? 0 : 16)) * y[i].qs[l];
            }
            want[r] += static_cast<float>(sum) * (ox::fp16_to_f32(b.d) * ox::fp16_to_f32(y[i].d));
            if constexpr (kQ5_1) want[r] += ox::fp16_to_f32(b.m) * ox::fp16_to_f32(y[i].s);
          }
        }
        gemm(static_cast<int64_t>(nb) * 32, reinterpret_cast<const uint8_t*>(w.data()), nb * sizeof(Block), rows,
             reinterpret_cast<const uint8_t*>(y.data()), nb * sizeof(Act), 1, got.data(), rows);
        expect_same_or_both_nan(want, got, std::string(ox::dtype_name(type)) + " nb " + std::to_string(nb) +
                                                " rows " + std::to_string(rows));
      }
    }
  };
  run(ox::BlockQ5_0{}, ox::BlockQ8_0{}, ox::DType::Q5_0);
  run(ox::BlockQ5_1{}, ox::BlockQ8_1{}, ox::DType::Q5_1);
#endif
}

// The probe behind iq4_nl_u8_quads (relaxed_slots.h): the plain module never claims an exact
// unsigned dot; where the relaxed module does, every unsigned operand 0..255 against every signed
// one -128..127 (and an addend) gives 4 u s + c, so the u8 bodies' operands are all covered. Which
// way this engine went is recorded (node 20's V8 saturates, as pmaddubsw does; Chromium's V8 on an
// AVX-VNNI machine is exact, and tests/kernels/chromium_run.mjs runs these tests there).
TEST(Simd128Relaxed, U8DotProbeIsExactWhereItSaysSo) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const bool exact = simd::u8_dot_exact();
  testing::Test::RecordProperty("u8_dot_exact", exact ? "yes" : "no");
  std::printf("u8_dot_exact: %s\n", exact ? "yes" : "no");
  if (!simd::relaxed_active()) {
    EXPECT_FALSE(exact) << "the plain module's probe body returns no dot";
    return;
  }
  if (!exact) GTEST_SKIP() << "this engine's relaxed dot is not exact on unsigned bytes";
  for (int u = 0; u < 256; ++u) {
    for (int sv = -128; sv < 128; ++sv) {
      const int32_t c = (u * 7 + sv) % 11 - 5;
      ASSERT_EQ(simd::u8_dot_probe(u, sv, c), 4 * u * sv + c) << "u " << u << " s " << sv << " c " << c;
    }
  }
#endif
}

// iq4_nl_u8_quads against its scalar steps (expect_quads_match), where it runs: the plain module's
// SIMD128 body, or the relaxed body where u8_dot_exact holds. Random bytes against random quants
// -128..127; every nibble 15 (value 113, operand 241) against -128 and against 127; every nibble 0
// (-127, operand 1) against -128; 15 and 0 alternating against -128 and 127 alternating.
TEST(Simd128Relaxed, Iq4NlU8QuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  if (simd::relaxed_active() && !simd::u8_dot_exact()) {
    GTEST_SKIP() << "this engine's relaxed dot is not exact on unsigned bytes: the body never runs here";
  }
  std::uniform_int_distribution<int> byte(0, 255);
  const int nibble[5] = {0, 15, 15, 0, 15}, activation[5] = {0, -128, 127, -128, -128};
  auto fill = [&](ox::BlockIQ4_NL& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 16; ++l) {
      const int v = data == 4 && l % 2 == 1 ? 0 : nibble[data];
      b.qs[l] = data == 0 ? static_cast<uint8_t>(byte(rng)) : static_cast<uint8_t>(v | v << 4);
    }
  };
  auto fill_act = [&](ox::BlockQ8_0& b, int data, std::mt19937& rng) {
    for (int l = 0; l < 32; ++l) {
      const int q = data == 4 && l % 2 == 1 ? 127 : activation[data];
      b.qs[l] = static_cast<int8_t>(data == 0 ? byte(rng) - 128 : q);
    }
  };
  auto dot = [](const ox::BlockIQ4_NL& b, const ox::BlockQ8_0& a) {
    int32_t sum = 0;
    for (int l = 0; l < 16; ++l) {
      sum += ox::kIQ4NLValues[b.qs[l] & 0xF] * a.qs[l] + ox::kIQ4NLValues[b.qs[l] >> 4] * a.qs[l + 16];
    }
    return sum;
  };
  expect_quads_match<ox::BlockIQ4_NL>(u8_quads_adapter(simd::iq4_nl_u8_quads, 128), 5, fill, fill_act, dot, 4343);
#endif
}

// IQ4_NL decode through the kernel table (one token): the rows the relaxed body takes and the ones
// left over, and a token with a quant of -128 anywhere, which the table must take another way
// (split_signs), against the scalar steps: per block the exact integer dot times (d_row * d_act)
// added in block order. Activations random in -128..127 (data 0) or with one -128 (data 1).
TEST(Simd128Relaxed, Iq4NlDecodeTakesEveryActivationBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const ox::kernels::KernelTable& t = ox::kernels::best_kernels();
  const ox::kernels::GemmFn gemm = t.gemm[static_cast<uint32_t>(ox::DType::IQ4_NL)];
  ASSERT_NE(gemm, nullptr);
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> byte(0, 255), quant(-127, 127);
  for (const int nb : {1, 4, 64}) {
    for (const int rows : {4, 22, 300}) {
      for (const int data : {0, 1}) {
        std::vector<ox::BlockIQ4_NL> w(static_cast<size_t>(rows) * nb);
        for (ox::BlockIQ4_NL& b : w) {
          for (uint8_t& q : b.qs) q = static_cast<uint8_t>(byte(rng));
          b.d = half_scale(rng);
        }
        std::vector<ox::BlockQ8_0> y(static_cast<size_t>(nb));
        for (ox::BlockQ8_0& b : y) {
          for (int8_t& q : b.qs) q = static_cast<int8_t>(quant(rng));
          b.d = half_scale(rng);
        }
        if (data == 1) y[static_cast<size_t>(nb) / 2].qs[byte(rng) % 32] = -128;
        std::vector<float> want(static_cast<size_t>(rows), 0.0f), got(static_cast<size_t>(rows), -1.0f);
        for (int r = 0; r < rows; ++r) {
          for (int i = 0; i < nb; ++i) {
            const ox::BlockIQ4_NL& b = w[static_cast<size_t>(r) * nb + i];
            int32_t sum = 0;
            for (int l = 0; l < 16; ++l) {
              sum += ox::kIQ4NLValues[b.qs[l] & 0xF] * y[i].qs[l] + ox::kIQ4NLValues[b.qs[l] >> 4] * y[i].qs[l + 16];
            }
            want[r] += static_cast<float>(sum) * (ox::fp16_to_f32(b.d) * ox::fp16_to_f32(y[i].d));
          }
        }
        const int64_t n = static_cast<int64_t>(nb) * 32;
        gemm(n, reinterpret_cast<const uint8_t*>(w.data()), nb * sizeof(ox::BlockIQ4_NL), rows,
             reinterpret_cast<const uint8_t*>(y.data()), nb * sizeof(ox::BlockQ8_0), 1, got.data(), rows);
        for (int r = 0; r < rows; ++r) {
          uint32_t a, b;
          std::memcpy(&a, &want[r], 4);
          std::memcpy(&b, &got[r], 4);
          ASSERT_EQ(a, b) << t.isa << " nb " << nb << " rows " << rows << " data " << data << " row " << r
                          << ": want " << want[r] << ", got " << got[r];
        }
      }
    }
  }
#endif
}

#if defined(__wasm_simd128__)
// A Q5 quads slot (q5_0_quads, q5_1_quads) against its float steps written out in scalar code: per
// block the exact integer dot of the weights' values (nibble + 16 * qh bit, less 16 for Q5_0) and
// the activations, converted, times (d_row * d_act), added to the row's sum in block order, then
// for Q5_1 m_row * s_act (fp16 each); both row orders of decode_groups. The fifth-bit tables are
// built here from their contract (relaxed_slots.h). Data kinds: 0 random (d and m of either sign,
// subnormal and zero: half_scale); 1 every stored quant 31 against activations -128; 2 every quant
// 0 against -128; 3 every quant 31 against 127; 4 random quants with the largest finite scales
// (65504) and the smallest subnormal ones in turn.
template <typename Block, typename ActBlock>
void expect_q5_quads_match(simd::Q5QuadsFn slot, unsigned seed) {
  constexpr bool kQ5_1 = std::is_same_v<Block, ox::BlockQ5_1>;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  const uint16_t extreme_scales[2] = {0x7BFF, 0x0001};
  for (int data = 0; data < 5; ++data) {
    for (const int nb : {1, 3, 8}) {
      for (const int groups : {1, 5, 16}) {
        for (const bool adjacent : {true, false}) {
          const int rows = 4 * groups;
          auto scale = [&]() { return data == 4 ? extreme_scales[rng() % 2] : half_scale(rng); };
          std::vector<Block> w(static_cast<size_t>(rows) * nb);
          for (Block& b : w) {
            const uint8_t fill = data == 1 || data == 3 ? 0xFF : 0x00;
            for (uint8_t& q : b.qs) q = data == 0 || data == 4 ? static_cast<uint8_t>(byte(rng)) : fill;
            for (uint8_t& h : b.qh) h = data == 0 || data == 4 ? static_cast<uint8_t>(byte(rng)) : fill;
            b.d = scale();
            if constexpr (kQ5_1) b.m = scale();
          }
          std::vector<ActBlock> y(static_cast<size_t>(nb));
          for (ActBlock& b : y) {
            for (int8_t& q : b.qs) {
              q = static_cast<int8_t>(data == 1 || data == 2 ? -128 : data == 3 ? 127 : byte(rng) - 128);
            }
            b.d = scale();
            if constexpr (kQ5_1) b.s = scale();
          }
          // fifth[(i * 4 + p) * 256 + v] = the sum of block i's quants 8p + k for the bits k set in v
          std::vector<int16_t> fifth(static_cast<size_t>(nb) * 1024);
          for (int i = 0; i < nb; ++i) {
            for (int p = 0; p < 4; ++p) {
              for (int v = 0; v < 256; ++v) {
                int sum = 0;
                for (int k = 0; k < 8; ++k) sum += (v >> k & 1) ? y[i].qs[8 * p + k] : 0;
                fifth[(static_cast<size_t>(i) * 4 + p) * 256 + v] = static_cast<int16_t>(sum);
              }
            }
          }
          const int64_t n = static_cast<int64_t>(nb) * 32;
          const simd::gemm::SplitActs act =
              simd::gemm::split_acts_block32(n, reinterpret_cast<const uint8_t*>(y.data()), kQ5_1);
          std::vector<float> want(static_cast<size_t>(rows), 0.0f), got(static_cast<size_t>(rows), -1.0f);
          for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < nb; ++i) {
              const Block& b = w[static_cast<size_t>(r) * nb + i];
              uint32_t qh;
              std::memcpy(&qh, b.qh, 4);
              int32_t dot = 0;
              for (int l = 0; l < 16; ++l) {
                const int lo = (b.qs[l] & 0xF) | (qh >> l & 1) << 4, hi = (b.qs[l] >> 4) | (qh >> (l + 16) & 1) << 4;
                const int offset = kQ5_1 ? 0 : 16;
                dot += (lo - offset) * y[i].qs[l] + (hi - offset) * y[i].qs[l + 16];
              }
              want[r] += static_cast<float>(dot) * (ox::fp16_to_f32(b.d) * ox::fp16_to_f32(y[i].d));
              if constexpr (kQ5_1) want[r] += ox::fp16_to_f32(b.m) * ox::fp16_to_f32(y[i].s);
            }
          }
          slot(nb, reinterpret_cast<const uint8_t*>(w.data()), static_cast<uint32_t>(nb * sizeof(Block)), groups,
               adjacent ? 4 : 1, adjacent ? 1 : groups, reinterpret_cast<const uint8_t*>(y.data()), act.q, act.d,
               act.s, act.sum, fifth.data(), simd::relaxed_constants, got.data());
          for (int r = 0; r < rows; ++r) {
            uint32_t a, b;
            std::memcpy(&a, &want[r], 4);
            std::memcpy(&b, &got[r], 4);
            EXPECT_EQ(a, b) << "data " << data << " nb " << nb << " groups " << groups
                            << (adjacent ? " adjacent" : " quarters") << " row " << r << ": want " << want[r]
                            << ", slot " << got[r];
          }
        }
      }
    }
  }
}
#endif

TEST(Simd128Relaxed, Q5_0QuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_q5_quads_match<ox::BlockQ5_0, ox::BlockQ8_0>(simd::q5_0_quads, 5150);
#endif
}

TEST(Simd128Relaxed, Q5_1QuadsMatchTheirScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_q5_quads_match<ox::BlockQ5_1, ox::BlockQ8_1>(simd::q5_1_quads, 5151);
#endif
}

#if defined(__wasm_simd128__)
// A block32 prefill of nibble blocks (the table's gemm for `type`, 3 or more tokens) against its
// float steps written out in scalar code: per 32-element block the exact integer dot of value(q)
// and the activations, converted, times (d_row * d_act), added to lane (block % 4) of the row's
// sum, the lanes then added as ((l0 + l1) + l2) + l3 (the tile of gemm_tile.h). Random and extreme
// data: every nibble 15 or every nibble 0, against activations -128. Each run takes every token in
// one call (KernelTable::gemm_all_tokens), split into passes by the gemm itself.
template <typename Block, typename Value>
void expect_nibble_prefill_matches(ox::DType type, Value value, unsigned seed) {
  const ox::kernels::GemmFn gemm = ox::kernels::best_kernels().gemm[static_cast<int>(type)];
  ASSERT_NE(gemm, nullptr);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const int extreme : {0, 1, 2}) {
    for (const int nb : {4, 12, 32, 256}) {
      for (const int rows : {1, 2, 5, 16, 19}) {
        for (const int tokens : {3, 4, 7, 9, 41}) {
          // 41 tokens of 8192 columns: more than one pass of the byte groups (12 tokens, a 5-token
          // last pass) and of the i16 groups (4 tokens, a 1-token last pass)
          if ((nb == 256) != (tokens == 41)) continue;
          const size_t w_stride = nb * sizeof(Block) + 3, a_stride = nb * sizeof(ox::BlockQ8_0) + 5;
          std::vector<uint8_t> wm(w_stride * rows), am(a_stride * tokens);
          auto wblock = [&](int r, int i) { return reinterpret_cast<Block*>(wm.data() + r * w_stride) + i; };
          auto ablock = [&](int t, int i) { return reinterpret_cast<ox::BlockQ8_0*>(am.data() + t * a_stride) + i; };
          for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < nb; ++i) {
              Block b;
              for (uint8_t& q : b.qs) q = extreme == 1 ? 0xFF : extreme == 2 ? 0x00 : static_cast<uint8_t>(byte(rng));
              b.d = half_scale(rng);
              std::memcpy(wblock(r, i), &b, sizeof(b));
            }
          }
          for (int t = 0; t < tokens; ++t) {
            for (int i = 0; i < nb; ++i) {
              ox::BlockQ8_0 b;
              for (int8_t& q : b.qs) q = static_cast<int8_t>(extreme != 0 ? -128 : byte(rng) - 128);
              b.d = half_scale(rng);
              std::memcpy(ablock(t, i), &b, sizeof(b));
            }
          }
          const int64_t y_stride = rows + 2;
          std::vector<float> y(static_cast<size_t>(y_stride * tokens), -1.0f);
          gemm(static_cast<int64_t>(nb) * 32, wm.data(), w_stride, rows, am.data(), a_stride, tokens, y.data(), y_stride);
          for (int t = 0; t < tokens; ++t) {
            for (int r = 0; r < rows; ++r) {
              float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              for (int i = 0; i < nb; ++i) {
                Block wb;
                ox::BlockQ8_0 ab;
                std::memcpy(&wb, wblock(r, i), sizeof(wb));
                std::memcpy(&ab, ablock(t, i), sizeof(ab));
                int32_t dot = 0;
                for (int l = 0; l < 16; ++l) dot += value(wb.qs[l] & 0xF) * ab.qs[l] + value(wb.qs[l] >> 4) * ab.qs[l + 16];
                lane[i % 4] += static_cast<float>(dot) * (ox::fp16_to_f32(wb.d) * ox::fp16_to_f32(ab.d));
              }
              const float want = ((lane[0] + lane[1]) + lane[2]) + lane[3], got = y[t * y_stride + r];
              uint32_t a, b;
              std::memcpy(&a, &want, 4);
              std::memcpy(&b, &got, 4);
              ASSERT_EQ(a, b) << "data " << extreme << " nb " << nb << " rows " << rows << " tokens " << tokens
                              << " cell (" << r << ", " << t << "): want " << want << ", gemm " << got;
            }
          }
        }
      }
    }
  }
}
#endif

// Q4_0 prefill (values q - 8). The plain module runs its i16 groups, the relaxed one the byte
// groups of gemm_i7.h (the i7_tile slot for whole 2 x 4 tiles, or u8_tile where u8_dot_exact holds;
// SIMD128 for the edges), so every module gives these bits.
TEST(Simd128Relaxed, Q4_0PrefillMatchesItsScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_nibble_prefill_matches<ox::BlockQ4_0>(ox::DType::Q4_0, [](int q) { return q - 8; }, 2468);
#endif
}

// IQ4_NL prefill (values kIQ4NLValues[q]): the i16 groups in the plain module and where the relaxed
// dot saturates unsigned bytes, the byte groups through u8_tile (codebook value + 128 against the
// activations, 128 * sum(a) off) where u8_dot_exact holds; the same bits everywhere.
TEST(Simd128Relaxed, Iq4NlPrefillMatchesItsScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_nibble_prefill_matches<ox::BlockIQ4_NL>(ox::DType::IQ4_NL, [](int q) { return int{ox::kIQ4NLValues[q]}; },
                                                 1357);
#endif
}

// IQ4_XS prefill (the table's gemm, 3 or more tokens) against tile_step_pair's float steps written
// out in scalar code: per super-block, lane j (< 4) of the row's sum gets the exact integer
// sc_j * dot_j + sc_{j+4} * dot_{j+4} (sc_u = ls_u - 32, dot_u: unit u's codebook values against
// the activations), converted, times (d_row * d_act); the lanes added as ((l0 + l1) + l2) + l3. The
// i16 groups in the plain module and where the relaxed dot saturates unsigned bytes, the u8
// super-blocks (u8_superblock_tile, SIMD128 for the edges) where u8_dot_exact holds: the same bits
// everywhere. Random data, and extremes: every nibble 0 (-127) or 15 (113) with every scale 63 or 0
// (31, -32) against activations -128 or 127.
TEST(Simd128Relaxed, Iq4XsPrefillMatchesItsScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const ox::kernels::GemmFn gemm = ox::kernels::best_kernels().gemm[static_cast<int>(ox::DType::IQ4_XS)];
  ASSERT_NE(gemm, nullptr);
  std::mt19937 rng(8642);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const int data : {0, 1, 2, 3}) {
    for (const int nb : {1, 3, 8, 32}) {
      for (const int rows : {1, 2, 5, 16, 19}) {
        for (const int tokens : {3, 4, 7, 9, 41}) {
          if ((nb == 32) != (tokens == 41)) continue;
          const size_t w_stride = nb * sizeof(ox::BlockIQ4_XS) + 3, a_stride = nb * sizeof(ox::BlockQ8_K) + 4;
          std::vector<uint8_t> wm(w_stride * rows), am(a_stride * tokens);
          auto wblock = [&](int r, int i) { return reinterpret_cast<ox::BlockIQ4_XS*>(wm.data() + r * w_stride) + i; };
          auto ablock = [&](int t, int i) { return reinterpret_cast<ox::BlockQ8_K*>(am.data() + t * a_stride) + i; };
          for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < nb; ++i) {
              ox::BlockIQ4_XS b;
              const uint8_t q = data == 1 ? 0x00 : data == 2 ? 0xFF : 0x0F;
              for (uint8_t& v : b.qs) v = data == 0 ? static_cast<uint8_t>(byte(rng)) : q;
              for (uint8_t& v : b.scales_l) v = data == 0 ? static_cast<uint8_t>(byte(rng)) : data == 2 ? 0x00 : 0xFF;
              b.scales_h = static_cast<uint16_t>(data == 0 ? byte(rng) << 8 | byte(rng) : data == 2 ? 0x0000 : 0xFFFF);
              b.d = half_scale(rng);
              std::memcpy(wblock(r, i), &b, sizeof(b));
            }
          }
          for (int t = 0; t < tokens; ++t) {
            for (int i = 0; i < nb; ++i) {
              ox::BlockQ8_K b;
              for (int l = 0; l < ox::kQK_K; ++l) {
                b.qs[l] = static_cast<int8_t>(data == 0 ? byte(rng) - 128 : data == 3 ? (l % 2 ? 127 : -128) : -128);
              }
              for (int k = 0; k < ox::kQK_K / 16; ++k) {
                int sum = 0;
                for (int l = 0; l < 16; ++l) sum += b.qs[16 * k + l];
                b.bsums[k] = static_cast<int16_t>(sum);
              }
              b.d = std::ldexp(static_cast<float>(byte(rng) + 1), -12);
              std::memcpy(ablock(t, i), &b, sizeof(b));
            }
          }
          const int64_t y_stride = rows + 2;
          std::vector<float> y(static_cast<size_t>(y_stride * tokens), -1.0f);
          gemm(static_cast<int64_t>(nb) * ox::kQK_K, wm.data(), w_stride, rows, am.data(), a_stride, tokens, y.data(),
               y_stride);
          for (int t = 0; t < tokens; ++t) {
            for (int r = 0; r < rows; ++r) {
              float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              for (int i = 0; i < nb; ++i) {
                ox::BlockIQ4_XS wb;
                ox::BlockQ8_K ab;
                std::memcpy(&wb, wblock(r, i), sizeof(wb));
                std::memcpy(&ab, ablock(t, i), sizeof(ab));
                int32_t scaled[8];
                for (int u = 0; u < 8; ++u) {
                  const int ls = ((wb.scales_l[u / 2] >> (4 * (u % 2))) & 0xF) | (((wb.scales_h >> (2 * u)) & 3) << 4);
                  int32_t dot = 0;
                  for (int l = 0; l < 16; ++l) {
                    dot += ox::kIQ4NLValues[wb.qs[16 * u + l] & 0xF] * ab.qs[32 * u + l] +
                           ox::kIQ4NLValues[wb.qs[16 * u + l] >> 4] * ab.qs[32 * u + l + 16];
                  }
                  scaled[u] = (ls - 32) * dot;
                }
                for (int j = 0; j < 4; ++j) {
                  lane[j] += static_cast<float>(scaled[j] + scaled[j + 4]) * (ox::fp16_to_f32(wb.d) * ab.d);
                }
              }
              const float want = ((lane[0] + lane[1]) + lane[2]) + lane[3], got = y[t * y_stride + r];
              uint32_t a, b;
              std::memcpy(&a, &want, 4);
              std::memcpy(&b, &got, 4);
              ASSERT_EQ(a, b) << "data " << data << " nb " << nb << " rows " << rows << " tokens " << tokens
                              << " cell (" << r << ", " << t << "): want " << want << ", gemm " << got;
            }
          }
        }
      }
    }
  }
#endif
}

// Q4_K prefill (the table's gemm for Q4_K and Q4_K_IL, 3 or more tokens) against its float steps
// written out in scalar code: per super-block, lane j (< 4) of the row's sum gets the exact integer
// sc_j * dot_j + sc_{j+4} * dot_{j+4} (dot_u: the unit's nibbles against the activations), converted,
// times (d_row * d_act), then (-dmin * m_j) * (d_act * bsum_j), then the same for unit j + 4; the
// lanes added as ((l0 + l1) + l2) + l3 (tile_step_pair of gemm_tile.h). The plain module runs its
// i16 groups, the relaxed one the byte super-blocks of gemm_i7.h (the i7_superblock_tile slot for
// whole 2 x 4 tiles, SIMD128 for the edges), so both give these bits; random and extreme data
// (nibbles, scales and mins 63 with activations -128; nibbles 0).
TEST(Simd128Relaxed, Q4KPrefillMatchesItsScalarStepsBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  const ox::kernels::KernelTable& kt = ox::kernels::best_kernels();
  const ox::kernels::GemmFn natural = kt.gemm[static_cast<int>(ox::DType::Q4_K)];
  const ox::kernels::GemmFn interleaved = kt.gemm[static_cast<int>(ox::DType::Q4_K_IL)];
  ASSERT_NE(natural, nullptr);
  ASSERT_NE(interleaved, nullptr);
  std::mt19937 rng(1357);
  for (const int extreme : {0, 1, 2}) {
    for (const int nb : {1, 3, 8}) {
      for (const int rows : {1, 2, 5, 16, 19}) {
        for (const int tokens : {3, 4, 7, 9}) {
          std::vector<ox::BlockQ4_K> w = q4_k_rows(rows, nb, extreme == 1, rng);
          if (extreme == 2) {
            for (ox::BlockQ4_K& b : w) std::memset(b.qs, 0, sizeof(b.qs));
          }
          std::vector<ox::BlockQ8_K> a;
          for (int t = 0; t < tokens; ++t) {
            const std::vector<ox::BlockQ8_K> row = q8_k_row(nb, extreme == 1, rng);
            a.insert(a.end(), row.begin(), row.end());
          }
          std::vector<ox::BlockQ4_K> w_il = w;
          ox::quant::q4_k_to_il(w_il.data(), static_cast<int64_t>(w_il.size()));
          const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K, y_stride = rows + 2;
          const uint64_t w_stride = nb * sizeof(ox::BlockQ4_K), a_stride = nb * sizeof(ox::BlockQ8_K);
          std::vector<float> y(static_cast<size_t>(y_stride * tokens), -1.0f), y_il = y;
          natural(n, reinterpret_cast<const uint8_t*>(w.data()), w_stride, rows,
                  reinterpret_cast<const uint8_t*>(a.data()), a_stride, tokens, y.data(), y_stride);
          interleaved(n, reinterpret_cast<const uint8_t*>(w_il.data()), w_stride, rows,
                      reinterpret_cast<const uint8_t*>(a.data()), a_stride, tokens, y_il.data(), y_stride);
          for (int t = 0; t < tokens; ++t) {
            for (int r = 0; r < rows; ++r) {
              float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              for (int i = 0; i < nb; ++i) {
                const ox::BlockQ4_K& wb = w[static_cast<size_t>(r) * nb + i];
                const ox::BlockQ8_K& ab = a[static_cast<size_t>(t) * nb + i];
                const float dw = ox::fp16_to_f32(wb.d), dmin = ox::fp16_to_f32(wb.dmin);
                for (int j = 0; j < 4; ++j) {
                  int32_t acc = 0;
                  float min_term[2];
                  for (int h = 0; h < 2; ++h) {
                    const int u = j + 4 * h;
                    uint8_t sc, m;
                    ox::quant::unpack_scale_min_k4(u, wb.scales, &sc, &m);
                    int32_t dot = 0;
                    for (int l = 0; l < 32; ++l) {
                      const int q = (wb.qs[32 * (u / 2) + l] >> (4 * (u % 2))) & 0xF;
                      dot += q * ab.qs[32 * u + l];
                    }
                    acc += sc * dot;
                    min_term[h] = (-dmin * static_cast<float>(m)) *
                                  (ab.d * static_cast<float>(ab.bsums[2 * u] + ab.bsums[2 * u + 1]));
                  }
                  lane[j] += static_cast<float>(acc) * (dw * ab.d);
                  lane[j] += min_term[0];
                  lane[j] += min_term[1];
                }
              }
              const float want = ((lane[0] + lane[1]) + lane[2]) + lane[3];
              for (const float got : {y[t * y_stride + r], y_il[t * y_stride + r]}) {
                uint32_t want_bits, got_bits;
                std::memcpy(&want_bits, &want, 4);
                std::memcpy(&got_bits, &got, 4);
                ASSERT_EQ(want_bits, got_bits) << "data " << extreme << " nb " << nb << " rows " << rows << " tokens "
                                               << tokens << " cell (" << r << ", " << t << "): want " << want
                                               << ", gemm " << got << " (Q4_K " << y[t * y_stride + r]
                                               << ", Q4_K_IL " << y_il[t * y_stride + r] << ")";
              }
            }
          }
        }
      }
    }
  }
#endif
}

// The SIMD128 conversions that run at load give the scalar reference's bytes.
// The TQ2_0 decode slot against the scalar reference, row by row (the slot's C++ body and its
// relaxed body both promise its bits): random blocks, every code 3 (a weight of 2, the largest
// products) and every code 0 (-1) against activations of -128, d of either sign and subnormal,
// shapes with one pair and rows far apart.
TEST(Simd128Relaxed, Tq2_0PairsMatchTheScalarReferenceBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::mt19937 rng(1357);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const int kind : {0, 1, 2}) {  // random, every code 3, every code 0
    const bool extreme = kind != 0;
    for (const int nb : {1, 3, 8}) {
      for (const int pairs : {1, 5, 16}) {
        std::vector<ox::BlockTQ2_0> w(static_cast<size_t>(2 * pairs) * nb);
        for (ox::BlockTQ2_0& b : w) {
          for (uint8_t& q : b.qs) q = kind == 0 ? static_cast<uint8_t>(byte(rng)) : kind == 1 ? 0xFF : 0x00;
          b.d = half_scale(rng);
        }
        const std::vector<ox::BlockQ8_K> y = q8_k_row(nb, extreme, rng);
        const int64_t n = static_cast<int64_t>(nb) * ox::kQK_K;
        std::vector<int32_t> a_sum(nb);
        for (int i = 0; i < nb; ++i) {
          a_sum[i] = 0;
          for (int8_t q : y[i].qs) a_sum[i] += q;
        }
        const v128_t* act = simd::gemm::split_acts_q8_k(n, reinterpret_cast<const uint8_t*>(y.data()));
        std::vector<float> want(2 * pairs), got(2 * pairs, -1.0f);
        for (int r = 0; r < 2 * pairs; ++r) {
          ox::quant_traits(ox::DType::TQ2_0).vec_dot_ref(n, &want[r], &w[static_cast<size_t>(r) * nb], y.data());
        }
        simd::tq2_0_pairs(nb, reinterpret_cast<const uint8_t*>(w.data()), static_cast<uint32_t>(nb * sizeof(ox::BlockTQ2_0)),
                          pairs, y.data(), act, a_sum.data(), got.data());
        for (int r = 0; r < 2 * pairs; ++r) {
          uint32_t a, b;
          std::memcpy(&a, &want[r], 4);
          std::memcpy(&b, &got[r], 4);
          EXPECT_EQ(a, b) << "kind " << kind << " nb " << nb << " pairs " << pairs << " row " << r << ": reference "
                          << want[r] << ", slot " << got[r];
        }
      }
    }
  }
#endif
}

#if defined(__wasm_simd128__)
// An i-quant pairs slot against iquant::row<F> row by row (the C++ body of the slot): random
// blocks against random activations and against every activation -128 (the one a negated sign
// would overflow), and every byte 0xFF (the last grid rows, every sign negative, the largest
// scales) against -128; d of either sign and subnormal.
template <typename F, typename Block>
void expect_iq_pairs_match(simd::IqPairsFn slot, const void* grid, const uint64_t* masks, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const int kind : {0, 1, 2}) {  // random, random against -128, every byte 0xFF against -128
    for (const int nb : {1, 3, 8}) {
      for (const int pairs : {1, 5, 16}) {
        std::vector<Block> w(static_cast<size_t>(2 * pairs) * nb);
        for (Block& b : w) {
          auto* p = reinterpret_cast<uint8_t*>(&b);
          for (size_t i = 0; i < sizeof(b); ++i) p[i] = kind == 2 ? 0xFF : static_cast<uint8_t>(byte(rng));
          b.d = half_scale(rng);
        }
        const std::vector<ox::BlockQ8_K> y = q8_k_row(nb, kind != 0, rng);
        std::vector<float> want(2 * pairs), got(2 * pairs, -1.0f);
        for (int r = 0; r < 2 * pairs; ++r) want[r] = simd::iquant::row<F>(nb, &w[static_cast<size_t>(r) * nb], y.data());
        slot(nb, reinterpret_cast<const uint8_t*>(w.data()), static_cast<uint32_t>(nb * sizeof(Block)), pairs, y.data(),
             grid, masks, got.data());
        for (int r = 0; r < 2 * pairs; ++r) {
          uint32_t a, b;
          std::memcpy(&a, &want[r], 4);
          std::memcpy(&b, &got[r], 4);
          EXPECT_EQ(a, b) << "kind " << kind << " nb " << nb << " pairs " << pairs << " row " << r << ": SIMD128 "
                          << want[r] << ", slot " << got[r];
        }
      }
    }
  }
}
#endif

TEST(Simd128Relaxed, Iq2SPairsMatchTheSimd128RowBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_iq_pairs_match<simd::iquant::IQ2S, ox::BlockIQ2_S>(simd::iq2_s_pairs, ox::quant::kIQ2SGrid,
                                                           simd::iquant::kSignMasks8.r, 2025);
#endif
}

TEST(Simd128Relaxed, Iq3XxsPairsMatchTheSimd128RowBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_iq_pairs_match<simd::iquant::IQ3XXS, ox::BlockIQ3_XXS>(simd::iq3_xxs_pairs, ox::quant::kIQ3XXSGrid,
                                                               simd::iquant::kSignMasks7.r, 2026);
#endif
}

TEST(Simd128Relaxed, Iq3SPairsMatchTheSimd128RowBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_iq_pairs_match<simd::iquant::IQ3S, ox::BlockIQ3_S>(simd::iq3_s_pairs, ox::quant::kIQ3SGrid,
                                                           simd::iquant::kSignMasks8.r, 2027);
#endif
}

TEST(Simd128Relaxed, RelayoutsMatchTheScalarConversions) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::mt19937 rng(99);
  std::vector<ox::BlockQ4_K> q4 = q4_k_rows(3, 7, false, rng), q4_want = q4;
  std::vector<ox::BlockQ6_K> q6 = q6_k_rows(3, 7, false, rng), q6_want = q6;
  ox::quant::q4_k_to_il(q4_want.data(), 21);
  ox::quant::q6_k_to_il(q6_want.data(), 21);
  simd::relayout_q4_k_il(q4.data(), 21);
  simd::relayout_q6_k_il(q6.data(), 21);
  EXPECT_EQ(std::memcmp(q4.data(), q4_want.data(), sizeof(ox::BlockQ4_K) * q4.size()), 0);
  EXPECT_EQ(std::memcmp(q6.data(), q6_want.data(), sizeof(ox::BlockQ6_K) * q6.size()), 0);
#endif
}

}  // namespace

#if defined(__wasm_simd128__)
// Q2_K rows: random bytes, d and dmin finite (half_scale); `extreme`: every quant 3 and every scale
// and min 15.
std::vector<ox::BlockQ2_K> q2_k_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ2_K> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (ox::BlockQ2_K& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = extreme ? 0xFF : static_cast<uint8_t>(byte(rng));
    b.d = half_scale(rng);
    b.dmin = half_scale(rng);
  }
  return out;
}

// Q3_K rows: random bytes, d finite (half_scale); `extreme`: every quant 3 (low bits 3, high bit
// set: u = 7) and every scale -32 (the 6-bit field 0), the largest products of either sign.
std::vector<ox::BlockQ3_K> q3_k_rows(int rows, int nb, bool extreme, std::mt19937& rng) {
  std::vector<ox::BlockQ3_K> out(static_cast<size_t>(rows) * nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (ox::BlockQ3_K& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = extreme ? 0xFF : static_cast<uint8_t>(byte(rng));
    if (extreme) std::memset(b.scales, 0, sizeof(b.scales));
    b.d = half_scale(rng);
  }
  return out;
}
#endif

TEST(Simd128Relaxed, Q2KPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockQ2_K>(q2_k_rows, simd::kquant::rows2_q2_k, simd::q2_k_pairs, 2468);
#endif
}

TEST(Simd128Relaxed, Q3KPairsMatchTheSimd128BodyBitForBit) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_pairs_match<ox::BlockQ3_K>(q3_k_rows, simd::kquant::rows2_q3_k, simd::q3_k_pairs, 8642);
#endif
}

TEST(Simd128Relaxed, Q2KIlPairsMatchRows2OnTheNaturalRows) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_il_pairs_match<ox::BlockQ2_K>(q2_k_rows, ox::quant::q2_k_to_il,
                                       rows2_on_natural<ox::BlockQ2_K, simd::kquant::rows2_q2_k>, simd::acts_q2_k_il,
                                       simd::q2_k_il_pairs, 1357);
#endif
}

TEST(Simd128Relaxed, Q3KIlPairsMatchRows2OnTheNaturalRows) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  expect_il_pairs_match<ox::BlockQ3_K>(q3_k_rows, ox::quant::q3_k_to_il,
                                       rows2_on_natural<ox::BlockQ3_K, simd::kquant::rows2_q3_k>, simd::acts_q2_k_il,
                                       simd::q3_k_il_pairs, 9753);
#endif
}

// The SIMD128 conversions (load time) against the scalar ones, and the sub-blocks prefill takes out of
// the converted blocks against the natural blocks' values (Q2_K: element 128h + 32j + 16t + l at bits
// 2j of qs[32h + 16t + l]; Q3_K: plus 4 * bit 4h + j of hmask[16t + l]).
#if defined(__wasm_simd128__)
template <typename Block>
void expect_sub_blocks(const std::vector<Block>& natural, const std::vector<Block>& il) {
  for (size_t i = 0; i < il.size(); ++i) {
    v128_t sub[16];
    if constexpr (requires { il[i].hmask; }) {
      simd::q2_q3_sub_blocks(il[i].qs, il[i].hmask, sub);
    } else {
      simd::q2_q3_sub_blocks(il[i].qs, nullptr, sub);
    }
    uint8_t got[256];
    std::memcpy(got, sub, sizeof(got));
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, j = e % 128 / 32, t = e % 32 / 16, l = e % 16;
      int want = natural[i].qs[32 * h + 16 * t + l] >> (2 * j) & 3;
      if constexpr (requires { natural[i].hmask; }) want |= (natural[i].hmask[16 * t + l] >> (4 * h + j) & 1) << 2;
      ASSERT_EQ(got[e], want) << "block " << i << " element " << e;
    }
  }
}
#endif

TEST(Simd128Relaxed, Q2KQ3KRelayoutsMatchTheScalarConversions) {
#if !defined(__wasm_simd128__)
  GTEST_SKIP() << "SIMD128 builds only";
#else
  std::mt19937 rng(98);
  const std::vector<ox::BlockQ2_K> natural = q2_k_rows(3, 7, false, rng);
  std::vector<ox::BlockQ2_K> q2 = natural, want = natural;
  ox::quant::q2_k_to_il(want.data(), 21);
  simd::relayout_q2_k_il(q2.data(), 21);
  EXPECT_EQ(std::memcmp(q2.data(), want.data(), sizeof(ox::BlockQ2_K) * q2.size()), 0);
  expect_sub_blocks(natural, q2);
  const std::vector<ox::BlockQ3_K> natural3 = q3_k_rows(3, 7, false, rng);
  std::vector<ox::BlockQ3_K> q3 = natural3, want3 = natural3;
  ox::quant::q3_k_to_il(want3.data(), 21);
  simd::relayout_q3_k_il(q3.data(), 21);
  EXPECT_EQ(std::memcmp(q3.data(), want3.data(), sizeof(ox::BlockQ3_K) * q3.size()), 0);
  expect_sub_blocks(natural3, q3);
#endif
}
