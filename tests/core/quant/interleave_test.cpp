// The interleaved layouts Q4_K_IL / Q6_K_IL / Q2_K_IL / Q3_K_IL (core/quant/interleave.h): where each quant lands,
// checked against the header's description written out element by element (not through the
// implementation's il16), the round trip, and references that give the natural formats' bits.
#include "core/quant/interleave.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/quant/blocks.h"
#include "core/quant/traits.h"

namespace ox::quant {
namespace {

template <typename Block>
std::vector<Block> random_blocks(int n, std::mt19937& rng) {
  std::vector<Block> out(static_cast<size_t>(n));
  std::uniform_int_distribution<int> byte(0, 255);
  for (Block& b : out) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(b); ++i) p[i] = static_cast<uint8_t>(byte(rng));
  }
  // finite fp16 scales (an exponent field below 31)
  for (Block& b : out) {
    b.d = static_cast<uint16_t>(b.d & 0xBBFF);
    if constexpr (requires { b.dmin; }) b.dmin = static_cast<uint16_t>(b.dmin & 0xBBFF);
  }
  return out;
}

// Q4_K: element 64c + i (i < 32) is the low nibble of qs[32c + i], 64c + 32 + i its high nibble.
int q4_k_natural(const BlockQ4_K& b, int e) {
  const int c = e / 64, i = e % 64;
  const uint8_t byte = b.qs[32 * c + i % 32];
  return i < 32 ? byte & 0x0F : byte >> 4;
}

// Q4_K_IL, from the header: byte p of run c, nibble n belongs to vector k = 2 (p / 16) + n, whose
// byte b = p % 16 holds il16(A[8k..8k+7], B[8k..8k+7]) at b: side (b / 2) % 2 (A: sub-block 2c,
// B: 2c + 1), index 8k + 2 (b / 4) + b % 2 within that sub-block.
TEST(Interleave, Q4KLayoutIsTheDocumentedOne) {
  std::mt19937 rng(7);
  std::vector<BlockQ4_K> nat = random_blocks<BlockQ4_K>(3, rng), il = nat;
  q4_k_to_il(il.data(), 3);
  for (int blk = 0; blk < 3; ++blk) {
    EXPECT_EQ(std::memcmp(&nat[blk], &il[blk], offsetof(BlockQ4_K, qs)), 0) << "d, dmin and scales stay";
    for (int c = 0; c < 4; ++c) {
      for (int p = 0; p < 32; ++p) {
        for (int n = 0; n < 2; ++n) {
          const int k = 2 * (p / 16) + n, b = p % 16;
          const int e = 64 * c + 32 * ((b / 2) % 2) + 8 * k + 2 * (b / 4) + b % 2;
          const int got = n == 0 ? il[blk].qs[32 * c + p] & 0x0F : il[blk].qs[32 * c + p] >> 4;
          ASSERT_EQ(got, q4_k_natural(nat[blk], e))
              << "block " << blk << " run " << c << " byte " << p << " nibble " << n;
        }
      }
    }
  }
}

// Q6_K_IL, from the header: every 32-byte run R of ql and qh becomes [R0 R1 R16 R17 R2 R3 R18 R19 ...
// R6 R7 R22 R23 | R8 R9 R24 R25 ... R14 R15 R30 R31].
TEST(Interleave, Q6KLayoutIsTheDocumentedOne) {
  std::mt19937 rng(8);
  std::vector<BlockQ6_K> nat = random_blocks<BlockQ6_K>(3, rng), il = nat;
  q6_k_to_il(il.data(), 3);
  for (int blk = 0; blk < 3; ++blk) {
    EXPECT_EQ(std::memcmp(nat[blk].scales, il[blk].scales, sizeof(nat[blk].scales)), 0);
    EXPECT_EQ(nat[blk].d, il[blk].d);
    auto check_run = [&](const uint8_t* from, const uint8_t* to, const char* what) {
      for (int p = 0; p < 32; ++p) {
        const int half = p / 16, m = (p % 16) / 4, r = p % 4;
        const int l = 8 * half + 2 * m + (r % 2) + (r >= 2 ? 16 : 0);
        ASSERT_EQ(to[p], from[l]) << what << " block " << blk << " byte " << p;
      }
    };
    for (int c = 0; c < 4; ++c) check_run(nat[blk].ql + 32 * c, il[blk].ql + 32 * c, "ql");
    for (int c = 0; c < 2; ++c) check_run(nat[blk].qh + 32 * c, il[blk].qh + 32 * c, "qh");
  }
}

// Q2_K: element 128h + 32j + 16t + l at bits 2j of qs[32h + 16t + l]. Q2_K_IL, from the header: byte
// 16b + 2m + e, bits 2j: element 2p + e of sub-block 8g + m, g = j & 1, p = 2b + j / 2.
TEST(Interleave, Q2KLayoutIsTheDocumentedOne) {
  std::mt19937 rng(9);
  std::vector<BlockQ2_K> nat = random_blocks<BlockQ2_K>(3, rng), il = nat;
  q2_k_to_il(il.data(), 3);
  for (int blk = 0; blk < 3; ++blk) {
    EXPECT_EQ(std::memcmp(nat[blk].scales, il[blk].scales, sizeof(nat[blk].scales)), 0);
    EXPECT_EQ(nat[blk].d, il[blk].d);
    EXPECT_EQ(nat[blk].dmin, il[blk].dmin);
    for (int b = 0; b < 4; ++b) {
      for (int m = 0; m < 8; ++m) {
        for (int e = 0; e < 2; ++e) {
          for (int j = 0; j < 4; ++j) {
            const int el = 16 * (8 * (j & 1) + m) + 2 * (2 * b + j / 2) + e;
            const int h = el / 128, jn = el % 128 / 32, t = el % 32 / 16, l = el % 16;
            const int want = nat[blk].qs[32 * h + 16 * t + l] >> (2 * jn) & 3;
            ASSERT_EQ(il[blk].qs[16 * b + 2 * m + e] >> (2 * j) & 3, want)
                << "block " << blk << " byte " << 16 * b + 2 * m + e << " plane " << j;
          }
        }
      }
    }
  }
}

// Q3_K_IL, from the header: qs as Q2_K_IL's; the high bit of the element at bits 2j of qs[byte] at bit
// 4 (byte / 32) + j of hmask[byte % 32], where Q3_K keeps the high bit of element 128h + 32j + 16t + l
// at bit 4h + j of hmask[16t + l].
TEST(Interleave, Q3KLayoutIsTheDocumentedOne) {
  std::mt19937 rng(10);
  std::vector<BlockQ3_K> nat = random_blocks<BlockQ3_K>(3, rng), il = nat;
  q3_k_to_il(il.data(), 3);
  for (int blk = 0; blk < 3; ++blk) {
    EXPECT_EQ(std::memcmp(nat[blk].scales, il[blk].scales, sizeof(nat[blk].scales)), 0);
    EXPECT_EQ(nat[blk].d, il[blk].d);
    for (int byte = 0; byte < 64; ++byte) {
      for (int j = 0; j < 4; ++j) {
        const int b = byte / 16, m = byte % 16 / 2, e = byte % 2;
        const int el = 16 * (8 * (j & 1) + m) + 2 * (2 * b + j / 2) + e;
        const int h = el / 128, jn = el % 128 / 32, t = el % 32 / 16, l = el % 16;
        ASSERT_EQ(il[blk].qs[byte] >> (2 * j) & 3, nat[blk].qs[32 * h + 16 * t + l] >> (2 * jn) & 3)
            << "block " << blk << " byte " << byte << " plane " << j;
        ASSERT_EQ(il[blk].hmask[byte % 32] >> (4 * (byte / 32) + j) & 1, nat[blk].hmask[16 * t + l] >> (4 * h + jn) & 1)
            << "block " << blk << " byte " << byte << " plane " << j << " (high bit)";
      }
    }
  }
}

template <typename Block>
void expect_round_trip(void (*to)(void*, int64_t), void (*from)(void*, int64_t), unsigned seed) {
  std::mt19937 rng(seed);
  const std::vector<Block> nat = random_blocks<Block>(17, rng);
  std::vector<Block> x = nat;
  to(x.data(), 17);
  EXPECT_NE(std::memcmp(x.data(), nat.data(), sizeof(Block) * nat.size()), 0) << "the layout moves quants";
  from(x.data(), 17);
  EXPECT_EQ(std::memcmp(x.data(), nat.data(), sizeof(Block) * nat.size()), 0);
}

TEST(Interleave, RoundTrips) {
  expect_round_trip<BlockQ4_K>(q4_k_to_il, q4_k_from_il, 11);
  expect_round_trip<BlockQ6_K>(q6_k_to_il, q6_k_from_il, 12);
  expect_round_trip<BlockQ2_K>(q2_k_to_il, q2_k_from_il, 13);
  expect_round_trip<BlockQ3_K>(q3_k_to_il, q3_k_from_il, 14);
}

// One token's Q8_K activations: the reference quantizer on random floats.
std::vector<BlockQ8_K> activations(int nb, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(nb) * kQK_K);
  for (float& v : x) v = normal(rng);
  std::vector<BlockQ8_K> out(static_cast<size_t>(nb));
  quant_traits(DType::Q8_K).from_float_ref(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

template <typename Block>
void expect_same_bits(DType natural, DType interleaved, void (*to)(void*, int64_t), unsigned seed) {
  std::mt19937 rng(seed);
  const int nb = 9;
  const int64_t n = static_cast<int64_t>(nb) * kQK_K;
  const std::vector<Block> nat = random_blocks<Block>(nb, rng);
  std::vector<Block> il = nat;
  to(il.data(), nb);
  std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
  quant_traits(natural).to_float(nat.data(), want.data(), n);
  quant_traits(interleaved).to_float(il.data(), got.data(), n);
  EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * want.size()), 0) << dtype_name(interleaved);
  for (int rep = 0; rep < 4; ++rep) {
    const std::vector<BlockQ8_K> y = activations(nb, rng);
    float a = 0, b = 1;
    quant_traits(natural).vec_dot_ref(n, &a, nat.data(), y.data());
    quant_traits(interleaved).vec_dot_ref(n, &b, il.data(), y.data());
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    EXPECT_EQ(ua, ub) << dtype_name(interleaved) << ": " << a << " vs " << b;
  }
}

TEST(Interleave, ReferencesGiveTheNaturalFormatsBits) {
  expect_same_bits<BlockQ4_K>(DType::Q4_K, DType::Q4_K_IL, q4_k_to_il, 21);
  expect_same_bits<BlockQ6_K>(DType::Q6_K, DType::Q6_K_IL, q6_k_to_il, 22);
  expect_same_bits<BlockQ2_K>(DType::Q2_K, DType::Q2_K_IL, q2_k_to_il, 23);
  expect_same_bits<BlockQ3_K>(DType::Q3_K, DType::Q3_K_IL, q3_k_to_il, 24);
}

TEST(Interleave, LayoutsAreInternalTypes) {
  for (DType t : {DType::Q4_K_IL, DType::Q6_K_IL, DType::Q2_K_IL, DType::Q3_K_IL}) {
    EXPECT_FALSE(dtype_is_known(static_cast<uint32_t>(t))) << "no file may name " << dtype_name(t);
    EXPECT_TRUE(dtype_facts(t).supported);
    DType parsed;
    EXPECT_FALSE(dtype_from_name(dtype_name(t), &parsed));
  }
  EXPECT_EQ(dtype_facts(DType::Q4_K_IL).type_size, dtype_facts(DType::Q4_K).type_size);
  EXPECT_EQ(dtype_facts(DType::Q6_K_IL).type_size, dtype_facts(DType::Q6_K).type_size);
  EXPECT_EQ(dtype_facts(DType::Q2_K_IL).type_size, dtype_facts(DType::Q2_K).type_size);
  EXPECT_EQ(dtype_facts(DType::Q3_K_IL).type_size, dtype_facts(DType::Q3_K).type_size);
}

// Saved state names a model by its file types (state_file.h): every internal layout must lead back
// to the GGUF type whose blocks it holds, and every GGUF type to itself.
TEST(Interleave, EveryInternalLayoutHasItsFileType) {
  EXPECT_EQ(dtype_file_type(DType::Q4_K_IL), DType::Q4_K);
  EXPECT_EQ(dtype_file_type(DType::Q6_K_IL), DType::Q6_K);
  EXPECT_EQ(dtype_file_type(DType::Q2_K_IL), DType::Q2_K);
  EXPECT_EQ(dtype_file_type(DType::Q3_K_IL), DType::Q3_K);
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    const DType t = static_cast<DType>(i);
    if (dtype_is_known(i)) {
      EXPECT_EQ(dtype_file_type(t), t) << dtype_name(t);
    } else if (dtype_facts(t).supported) {  // an internal layout
      const DType file = dtype_file_type(t);
      EXPECT_TRUE(dtype_is_known(static_cast<uint32_t>(file))) << dtype_name(t) << " has no file type";
      EXPECT_EQ(dtype_facts(file).type_size, dtype_facts(t).type_size) << dtype_name(t);
      EXPECT_EQ(dtype_facts(file).block_size, dtype_facts(t).block_size) << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace ox::quant
