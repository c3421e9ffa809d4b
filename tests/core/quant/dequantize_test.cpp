// Dequantization of hand-built blocks. Expected values come from (a) literals worked out by hand
// in the comments and (b) float64 decoders written here from the GGUF block layouts (byte offsets,
// not core/quant's structs), walking each block the way the format description lays it out.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "tests/core/quant/quant_test_util.h"

namespace ox {
namespace {

using test::half_value;
using test::load_u16;

constexpr int kNL[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

std::vector<float> run(DType t, const std::vector<uint8_t>& bytes) {
  const DTypeFacts& f = dtype_facts(t);
  return test::dequantize(t, bytes, bytes.size() / f.type_size * f.block_size);
}

void put_u16(std::vector<uint8_t>& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v);
  b[off + 1] = static_cast<uint8_t>(v >> 8);
}

// ---- hand-built blocks with hand-computed values

TEST(Dequantize, Q4_0ByHand) {
  std::vector<uint8_t> b(18);
  put_u16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> y = run(DType::Q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * (j - 8)) << j;         // low nibble j
    EXPECT_EQ(y[16 + j], 0.5f * (7 - j)) << j;    // high nibble 15 - j
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[31], -4.0f);
}

TEST(Dequantize, Q4_1ByHand) {
  std::vector<uint8_t> b(20);
  put_u16(b, 0, 0x3400);  // d = 0.25
  put_u16(b, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(((3 * j) & 15) | (j << 4));
  const std::vector<float> y = run(DType::Q4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.25f * ((3 * j) & 15) - 1.0f) << j;
    EXPECT_EQ(y[16 + j], 0.25f * j - 1.0f) << j;
  }
  EXPECT_EQ(y[5], 2.75f);  // q = 15
}

TEST(Dequantize, Q5_0ByHand) {
  std::vector<uint8_t> b(22);
  put_u16(b, 0, 0x4000);                                   // d = 2
  const uint8_t qh[4] = {0x0F, 0xF0, 0xA5, 0xA5};          // bit i = 5th bit of element i
  std::memcpy(&b[2], qh, 4);
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>(((7 * j) & 15) | (((5 * j + 3) & 15) << 4));
  const std::vector<float> y = run(DType::Q5_0, b);
  for (int j = 0; j < 16; ++j) {
    const int hi0 = (qh[j / 8] >> (j % 8)) & 1, hi1 = (qh[2 + j / 8] >> (j % 8)) & 1;
    EXPECT_EQ(y[j], 2.0f * (((7 * j) & 15) + 16 * hi0 - 16)) << j;
    EXPECT_EQ(y[16 + j], 2.0f * (((5 * j + 3) & 15) + 16 * hi1 - 16)) << j;
  }
  EXPECT_EQ(y[0], 0.0f);     // q = 0 | 16 -> 0
  EXPECT_EQ(y[4], -8.0f);    // q = 28 & 15 = 12, bit 4 clear -> 2 * (12 - 16)
  EXPECT_EQ(y[16], 6.0f);    // q = 3 | 16 (bit 16 set) -> 2 * 3
}

TEST(Dequantize, Q5_1ByHand) {
  std::vector<uint8_t> b(24);
  put_u16(b, 0, 0x3800);  // d = 0.5
  put_u16(b, 2, 0xC000);  // m = -2
  const uint8_t qh[4] = {0x00, 0xFF, 0x01, 0x80};
  std::memcpy(&b[4], qh, 4);
  for (int j = 0; j < 16; ++j) b[8 + j] = static_cast<uint8_t>(j | (j << 4));
  const std::vector<float> y = run(DType::Q5_1, b);
  EXPECT_EQ(y[3], 0.5f * 3 - 2.0f);          // no 5th bit
  EXPECT_EQ(y[9], 0.5f * (9 + 16) - 2.0f);   // bit 9 set
  EXPECT_EQ(y[16], 0.5f * 16 - 2.0f);        // element 16: nibble 0, bit 16 set
  EXPECT_EQ(y[31], 0.5f * (15 + 16) - 2.0f); // bit 31 set
  EXPECT_EQ(y[30], 0.5f * 14 - 2.0f);
}

TEST(Dequantize, Q8FormatsByHand) {
  std::vector<uint8_t> b0(34), b1(36), bk(292);
  put_u16(b0, 0, 0x3400);  // 0.25
  put_u16(b1, 0, 0xB800);  // -0.5
  for (int j = 0; j < 32; ++j) b0[2 + j] = b1[4 + j] = static_cast<uint8_t>(static_cast<int8_t>(8 * j - 128));
  const float dk = 0.125f;
  std::memcpy(&bk[0], &dk, 4);
  for (int j = 0; j < 256; ++j) bk[4 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 128));
  const std::vector<float> y0 = run(DType::Q8_0, b0), y1 = run(DType::Q8_1, b1), yk = run(DType::Q8_K, bk);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(y0[j], 0.25f * (8 * j - 128));
    EXPECT_EQ(y1[j], -0.5f * (8 * j - 128));
  }
  for (int j = 0; j < 256; ++j) EXPECT_EQ(yk[j], 0.125f * (j - 128));
}

TEST(Dequantize, KQuantsByHand) {
  {  // Q2_K element 37: half 0, shift 2, l = 5 -> bits 2..3 of qs[5]; sub-block 2.
    std::vector<uint8_t> b(84, 0);
    b[2] = 0x35;            // scales[2]: sc = 5, m = 3
    b[16 + 5] = 0x08;       // qs[5] bits 2..3 = 2
    put_u16(b, 80, 0x3C00);  // d = 1
    put_u16(b, 82, 0x3800);  // dmin = 0.5
    EXPECT_EQ(run(DType::Q2_K, b)[37], 1.0f * 5 * 2 - 0.5f * 3);  // 8.5
  }
  {  // Q3_K element 200: half 1, shift 4, l = 8; hmask[8] bit 6; sub-block 12.
    std::vector<uint8_t> b(110, 0);
    b[32 + 32 + 8] = 0x30;   // qs[40] bits 4..5 = 3, hmask bit clear -> q = 3 - 4 = -1
    b[96 + 4] = 0x70;        // scale 12 low nibble (high half of byte 4) = 7
    b[96 + 8] = 0x80;        // scale 12 top bits (bits 6..7 of byte 8) = 2 -> 39 - 32 = 7
    put_u16(b, 108, 0x4000);  // d = 2
    EXPECT_EQ(run(DType::Q3_K, b)[200], 2.0f * 7 * -1);  // -14
    b[8] = 0x40;              // hmask[8] bit 6 set -> q = 3
    EXPECT_EQ(run(DType::Q3_K, b)[200], 2.0f * 7 * 3);   // 42
  }
  {  // Q4_K element 150: sub-block 4 (6-bit sc/m split over bytes 0, 4, 8); qs[86] low nibble.
    std::vector<uint8_t> b(144, 0);
    put_u16(b, 0, 0x3800);  // d = 0.5
    put_u16(b, 2, 0x3400);  // dmin = 0.25
    b[4 + 8] = 0x3A;        // sc low 0xA, m low 3
    b[4 + 0] = 0x40;        // sc high bits = 1 -> sc = 26
    b[4 + 4] = 0x80;        // m high bits = 2 -> m = 35
    b[16 + 86] = 0x9C;      // q = 12
    EXPECT_EQ(run(DType::Q4_K, b)[150], 0.5f * 26 * 12 - 0.25f * 35);  // 147.25
    // Q5_K: same fields, plus bit 4 (= 2 * chunk 2) of qh[22] gives element 150 its 5th bit.
    std::vector<uint8_t> c(176, 0);
    std::memcpy(&c[0], &b[0], 16);
    c[48 + 86] = 0x9C;
    c[16 + 22] = 0x10;
    EXPECT_EQ(run(DType::Q5_K, c)[150], 0.5f * 26 * 28 - 0.25f * 35);  // 355.25
  }
  {  // Q6_K element 170: half 1, quarter 1, l = 10 -> low nibble of ql[106], bits 2..3 of qh[42].
    std::vector<uint8_t> b(210, 0);
    b[106] = 0x05;
    b[128 + 42] = 0x0C;                          // high 2 bits = 3 -> q = 53 -> 21
    b[192 + 10] = static_cast<uint8_t>(-3);      // scales[10] = -3
    put_u16(b, 208, 0x3400);                     // d = 0.25
    EXPECT_EQ(run(DType::Q6_K, b)[170], 0.25f * -3 * 21);  // -15.75
  }
  {  // IQ4_NL: element 3 = low nibble of qs[3], element 19 = its high nibble.
    std::vector<uint8_t> b(18, 0);
    put_u16(b, 0, 0x3800);
    b[2 + 3] = 0xE2;
    const std::vector<float> y = run(DType::IQ4_NL, b);
    EXPECT_EQ(y[3], 0.5f * -83);
    EXPECT_EQ(y[19], 0.5f * 89);
    EXPECT_EQ(y[0], 0.5f * -127);
  }
  {  // IQ4_XS sub-block 5: scale = (scales_l[2] >> 4) | ((scales_h >> 10) & 3) << 4, minus 32.
    std::vector<uint8_t> b(136, 0);
    put_u16(b, 0, 0x3400);   // d = 0.25
    put_u16(b, 2, 0x0800);   // scales_h bits 10..11 = 2
    b[4 + 2] = 0x90;         // low nibble of scale 5 = 9 -> 41 - 32 = 9
    b[8 + 16 * 5 + 4] = 0xF0;  // element 5*32 + 20: high nibble of qs[84] = 15 -> 113
    EXPECT_EQ(run(DType::IQ4_XS, b)[180], 0.25f * 9 * 113);  // 254.25
  }
}

// Codebook entries quoted from llama.cpp's ggml-common.h: iq2xxs_grid[1] = 0x080808080808082b,
// iq2xs_grid[2] = 0x0808080808081919, iq2s_grid[1022] = 0x2b2b2b2b2b082b08 (element 0 in the low
// byte; 0x08 = 8, 0x19 = 25, 0x2b = 43). x = d * (0.5 + ls) / 4 * grid * sign.
TEST(Dequantize, IQ2ByHand) {
  {  // IQ2_XXS, 32-group 1 (bytes 10..17): grid indices 1, 0, 0, 0, then u32 signs | ls << 28.
    std::vector<uint8_t> b(66, 0);
    put_u16(b, 0, 0x3C00);  // d = 1
    b[10] = 1;
    const uint32_t aux = 0x30000001;  // octet 0: stored signs 1 -> elements 0 and 7 (parity); ls = 3
    std::memcpy(&b[14], &aux, 4);
    const std::vector<float> y = run(DType::IQ2_XXS, b);
    EXPECT_EQ(y[32], -0.875f * 43);  // db = 3.5 / 4
    EXPECT_EQ(y[33], 0.875f * 8);
    EXPECT_EQ(y[39], -0.875f * 8);
    EXPECT_EQ(y[40], 0.875f * 8);   // octet 1: entry 0, no signs
    EXPECT_EQ(y[0], 0.125f * 8);    // group 0: entry 0, ls = 0 -> db = 0.5 / 4
  }
  {  // IQ2_XS octet 5 (u16 at byte 12): index 2, stored signs 3; its ls is the low nibble of scales[1].
    std::vector<uint8_t> b(74, 0);
    put_u16(b, 0, 0x3800);  // d = 0.5
    put_u16(b, 12, static_cast<uint16_t>(2 | 3 << 9));
    b[66 + 1] = 0xA7;        // ls = 7 for elements 32..47, 10 for 48..63
    const std::vector<float> y = run(DType::IQ2_XS, b);
    EXPECT_EQ(y[40], -0.9375f * 25);  // db = 0.5 * 7.5 / 4
    EXPECT_EQ(y[41], -0.9375f * 25);
    EXPECT_EQ(y[42], 0.9375f * 8);
    EXPECT_EQ(y[48], 0.5f * 10.5f / 4 * 8);
  }
  {  // IQ2_S octet 6: low index byte qs[6], bits 8..9 in bits 4..5 of qh[1], signs qs[38], ls high nibble of scales[1].
    std::vector<uint8_t> b(82, 0);
    put_u16(b, 0, 0x4000);  // d = 2
    b[2 + 6] = 0xFE;
    b[66 + 1] = 0x30;       // index 0x3FE = 1022
    b[2 + 32 + 6] = 0x80;   // element 7 negative
    b[74 + 1] = 0xF0;       // ls = 15
    const std::vector<float> y = run(DType::IQ2_S, b);
    EXPECT_EQ(y[48], 7.75f * 8);  // db = 2 * 15.5 / 4
    EXPECT_EQ(y[49], 7.75f * 43);
    EXPECT_EQ(y[50], 7.75f * 8);
    EXPECT_EQ(y[55], -7.75f * 43);
  }
}

// The grid i-quants, with codebook entries quoted from llama.cpp's ggml-common.h (iq3xxs_grid,
// iq3s_grid, iq1s_grid; little-endian, element k in byte k) and ksigns_iq2xs[16] = 144 (bits 4, 7).
// Every entry and layout on random blocks: iq3_iq1_reference_test.cpp, against llama.cpp itself.
TEST(Dequantize, GridIQuantsByHand) {
  {  // IQ3_XXS: d = 0.5; sub-block 2 word (bytes 2 + 64 + 8): scale 5, group 1 sign field 16.
    std::vector<uint8_t> b(98, 0);
    put_u16(b, 0, 0x3800);
    const uint32_t aux = (5u << 28) | (16u << 7);
    for (int i = 0; i < 4; ++i) b[2 + 64 + 8 + i] = static_cast<uint8_t>(aux >> (8 * i));
    b[2 + 19] = 1;    // element 76 = sub-block 2, group 1, value 4: index qs[16 + 2 + 1] -> 0x04040414
    b[2 + 0] = 255;   // elements 0..3: iq3xxs_grid[255] = 0x3e341c04
    const std::vector<float> y = run(DType::IQ3_XXS, b);
    EXPECT_EQ(y[76], 0.5f * 5.5f * 0.5f * 20 * -1);   // byte 0x14, sign bit 4 of 144
    EXPECT_EQ(y[79], 0.5f * 5.5f * 0.5f * 4 * -1);    // sign bit 7
    EXPECT_EQ(y[72], 0.5f * 5.5f * 0.5f * 4);         // qs[18] = 0 -> 0x04040404, bit 0 clear
    EXPECT_EQ(y[0], 0.5f * 0.5f * 0.5f * 4);           // sub-block 0: scale 0 -> d * 0.25
    EXPECT_EQ(y[3], 0.5f * 0.5f * 0.5f * 62);
  }
  {  // IQ3_S: d = 0.25; element 113 = sub-block 3, group 4 (qs[28], bit 4 of qh[3]), value 1.
    std::vector<uint8_t> b(110, 0);
    put_u16(b, 0, 0x3400);
    b[2 + 28] = 1;
    b[66 + 3] = 0x10;        // index 256 + 1: iq3s_grid[257] = 0x05090705
    b[74 + 14] = 0x02;       // signs of values 112..119: bit 1
    b[106 + 1] = 0x60;       // sub-block 3 (odd): high nibble of scales[1] = 6 -> 1 + 12
    const std::vector<float> y = run(DType::IQ3_S, b);
    EXPECT_EQ(y[113], 0.25f * 13 * 7 * -1);
    EXPECT_EQ(y[112], 0.25f * 13 * 5);
    EXPECT_EQ(y[116], 0.25f * 13 * 1);       // group 5: qs[29] = 0 -> 0x01010101
    EXPECT_EQ(y[0], 0.25f * 1 * 1);          // sub-block 0: scale 0 -> 1
  }
  {  // IQ1_S: d = 0.5; element 176 = sub-block 5, group 2 (qs[22], bits 6..8 of qh[5]).
    std::vector<uint8_t> b(50, 0);
    put_u16(b, 0, 0x3800);
    b[2 + 22] = 1;                              // iq1s_grid[1] = 0xffffffffffffff01
    put_u16(b, 34 + 2 * 5, (1u << 15) | (3u << 12));  // delta -1/8, scale 3 -> 2 * 3 + 1
    const std::vector<float> y = run(DType::IQ1_S, b);
    EXPECT_EQ(y[176], 0.5f * 7 * (1 - 0.125f));
    EXPECT_EQ(y[177], 0.5f * 7 * (-1 - 0.125f));
    EXPECT_EQ(y[0], 0.5f * 1 * (-1 + 0.125f));  // sub-block 0: grid 0 is all -1, delta +1/8
  }
  {  // IQ1_M: d = 0.5 = 0x3800 in the top nibbles of the scale words (0, 0, 8, 3); element 104
     // = group 13: qs[13], high nibble of qh[6]; 16-group 6: bits 6..8 of scale word 1.
    std::vector<uint8_t> b(56, 0);
    b[13] = 1;            // iq1s_grid[1]
    b[32 + 6] = 0x80;     // group 13: index bits 0, delta sign set
    const uint16_t words[4] = {0x0000, 2u << 6, 0x8000, 0x3000};  // scale 2 -> 5; d nibbles
    for (int i = 0; i < 4; ++i) put_u16(b, 48 + 2 * i, words[i]);
    const std::vector<float> y = run(DType::IQ1_M, b);
    EXPECT_EQ(y[104], 0.5f * 5 * (1 - 0.125f));
    EXPECT_EQ(y[105], 0.5f * 5 * (-1 - 0.125f));
    EXPECT_EQ(y[96], 0.5f * 5 * (-1 + 0.125f));   // group 12: low nibble, delta +1/8
    EXPECT_EQ(y[0], 0.5f * 1 * (-1 + 0.125f));    // 16-group 0: scale 0 -> 1
  }
}

TEST(Dequantize, MXFP4ByHand) {
  std::vector<uint8_t> b(2 * 17, 0);
  b[0] = 130;     // e: d = 2^(130 - 128) = 4
  b[1 + 3] = 0xD6;  // element 3: code 6 (4.0 in E2M1, table 8); element 19: code 13 (-3.0, table -6)
  b[1 + 0] = 0x87;  // element 0: code 7 (6.0, table 12); element 16: code 8 (-0)
  b[17] = 0;        // second block: e = 0, d = 2^-128 (a subnormal float)
  b[17 + 1 + 5] = 0x01;
  const std::vector<float> y = run(DType::MXFP4, b);
  EXPECT_EQ(y[3], 32.0f);
  EXPECT_EQ(y[19], -24.0f);
  EXPECT_EQ(y[0], 48.0f);
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_FALSE(std::signbit(y[16]));  // the table's -0 entry is the integer 0: +0.0f, as llama.cpp
  EXPECT_EQ(y[32 + 5], std::ldexp(1.0f, -128));
  EXPECT_EQ(y[32 + 21], 0.0f);
}

TEST(Dequantize, TQ2_0ByHand) {
  std::vector<uint8_t> b(66, 0);
  put_u16(b, 64, 0x3800);  // d = 0.5
  // Element 128j + 32l + m sits at bits 2l..2l+1 of qs[32j + m]: elements 197 (l = 2) and 229
  // (l = 3) share qs[37].
  b[37] = 0x20 | 0xC0;  // 197: code 2 -> +1; 229: code 3 -> +2 (never written, but decodable)
  const std::vector<float> y = run(DType::TQ2_0, b);
  EXPECT_EQ(y[197], 0.5f);
  EXPECT_EQ(y[229], 1.0f);
  EXPECT_EQ(y[165], -0.5f);  // l = 1 of the same byte: code 0 -> -1
  EXPECT_EQ(y[0], -0.5f);    // zero bytes are all -1, not 0
}

TEST(Dequantize, TQ1_0ByHand) {
  std::vector<uint8_t> b(54, 0);
  put_u16(b, 52, 0x4000);  // d = 2
  // Trits (2, 0, 1, 2, 1) = 178 in base 3, stored as ceil(256 * 178 / 243) = 188; byte 7 of the
  // first 32 holds elements 7, 39, 71, 103, 135.
  b[7] = 188;
  // qh[2]: trits (0, 2, 1, 0) and a zero pad = 63, ceil(256 * 63 / 243) = 67: elements 242, 246, 250, 254.
  b[48 + 2] = 67;
  // 255 reads as all 2s: elements 160 + 16k + 4 of byte 36.
  b[36] = 255;
  const std::vector<float> y = run(DType::TQ1_0, b);
  const int first[5] = {7, 39, 71, 103, 135};
  const float first_want[5] = {2.0f, -2.0f, 0.0f, 2.0f, 0.0f};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(y[first[k]], first_want[k]) << k;
  const float qh_want[4] = {-2.0f, 2.0f, 0.0f, -2.0f};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(y[242 + 4 * k], qh_want[k]) << k;
  for (int k = 0; k < 5; ++k) EXPECT_EQ(y[164 + 16 * k], 2.0f) << k;
  EXPECT_EQ(y[0], -2.0f);  // a zero byte is all zero trits, -1 each
}

// ---- float64 decoders from the layouts, checked on random blocks

// Fills a block with random bytes and sane fp16 scales at the given offsets.
std::vector<uint8_t> random_blocks(DType t, int n_blocks, std::initializer_list<size_t> half_offsets, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t ts = dtype_facts(t).type_size;
  std::vector<uint8_t> b(static_cast<size_t>(n_blocks) * ts);
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  const uint16_t halves[4] = {0x2E66, 0x3400, 0xA266, 0x1C00};  // 0.1, 0.25, -0.0125, 2^-8
  for (int i = 0; i < n_blocks; ++i) {
    for (size_t off : half_offsets) put_u16(b, i * ts + off, halves[rng() % 4]);
  }
  return b;
}

std::vector<double> decode_q2_k(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 84) {
    const double d = half_value(load_u16(p + 80)), dmin = half_value(load_u16(p + 82));
    const uint8_t* sc = p;
    for (int h = 0; h < 2; ++h) {
      const uint8_t* q = p + 16 + 32 * h;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int half16 = 0; half16 < 2; ++half16, ++sc) {
          for (int l = 0; l < 16; ++l) {
            y.push_back(d * (*sc & 15) * ((q[16 * half16 + l] >> shift) & 3) - dmin * (*sc >> 4));
          }
        }
      }
    }
  }
  return y;
}

std::vector<double> decode_q3_k(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 110) {
    const double d = half_value(load_u16(p + 108));
    const uint8_t* hm = p;
    const uint8_t* s = p + 96;
    int scale[16];
    for (int j = 0; j < 16; ++j) {
      const int low = j < 8 ? (s[j] & 15) : (s[j - 8] >> 4);
      scale[j] = (low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
    }
    int is = 0, bit = 0;
    for (int h = 0; h < 2; ++h) {
      const uint8_t* q = p + 32 + 32 * h;
      for (int shift = 0; shift < 8; shift += 2, ++bit) {
        for (int half16 = 0; half16 < 2; ++half16, ++is) {
          for (int l = 16 * half16; l < 16 * half16 + 16; ++l) {
            const int v = ((q[l] >> shift) & 3) - (((hm[l] >> bit) & 1) ? 0 : 4);
            y.push_back(d * scale[is] * v);
          }
        }
      }
    }
  }
  return y;
}

void scale_min_k4(const uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

std::vector<double> decode_q45_k(const uint8_t* p, int nb, bool five) {
  std::vector<double> y;
  const int ts = five ? 176 : 144;
  for (int i = 0; i < nb; ++i, p += ts) {
    const double d = half_value(load_u16(p)), dmin = half_value(load_u16(p + 2));
    const uint8_t* qh = p + 16;
    const uint8_t* q = p + (five ? 48 : 16);
    for (int c = 0; c < 4; ++c, q += 32) {
      for (int part = 0; part < 2; ++part) {
        int sc, m;
        scale_min_k4(p + 4, 2 * c + part, &sc, &m);
        for (int l = 0; l < 32; ++l) {
          int v = part ? (q[l] >> 4) : (q[l] & 15);
          if (five && ((qh[l] >> (2 * c + part)) & 1)) v += 16;
          y.push_back(d * sc * v - dmin * m);
        }
      }
    }
  }
  return y;
}

std::vector<double> decode_q6_k(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 210) {
    const double d = half_value(load_u16(p + 208));
    const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
    double out[256];
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = p + 64 * h;
      const uint8_t* qh = p + 128 + 32 * h;
      for (int l = 0; l < 32; ++l) {
        const int is = 8 * h + l / 16;
        out[128 * h + l] = d * sc[is] * (((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32);
        out[128 * h + l + 32] = d * sc[is + 2] * (((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
        out[128 * h + l + 64] = d * sc[is + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        out[128 * h + l + 96] = d * sc[is + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
      }
    }
    y.insert(y.end(), out, out + 256);
  }
  return y;
}

std::vector<double> decode_iq4_xs(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 136) {
    const double d = half_value(load_u16(p));
    const uint16_t sh = load_u16(p + 2);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((p[4 + ib / 2] >> (4 * (ib % 2))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
      const uint8_t* q = p + 8 + 16 * ib;
      for (int j = 0; j < 16; ++j) y.push_back(d * (ls - 32) * kNL[q[j] & 15]);
      for (int j = 0; j < 16; ++j) y.push_back(d * (ls - 32) * kNL[q[j] >> 4]);
    }
  }
  return y;
}

std::vector<double> decode_legacy(DType t, const uint8_t* p, int nb) {
  std::vector<double> y;
  const uint32_t ts = dtype_facts(t).type_size;
  for (int i = 0; i < nb; ++i, p += ts) {
    const double d = half_value(load_u16(p));
    const bool has_m = t == DType::Q4_1 || t == DType::Q5_1;
    const double m = has_m ? half_value(load_u16(p + 2)) : 0.0;
    const bool five = t == DType::Q5_0 || t == DType::Q5_1;
    const uint8_t* qh = p + (has_m ? 4 : 2);
    const uint8_t* qs = qh + (five ? 4 : 0);
    const uint32_t h = five ? (qh[0] | qh[1] << 8 | qh[2] << 16 | static_cast<uint32_t>(qh[3]) << 24) : 0;
    for (int half = 0; half < 2; ++half) {
      for (int j = 0; j < 16; ++j) {
        const int e = 16 * half + j;
        int q = half ? (qs[j] >> 4) : (qs[j] & 15);
        if (t == DType::IQ4_NL) {
          y.push_back(d * kNL[q]);
          continue;
        }
        if (five) q |= ((h >> e) & 1) << 4;
        const int offset = has_m ? 0 : (five ? 16 : 8);
        y.push_back(d * (q - offset) + m);
      }
    }
  }
  return y;
}

std::vector<double> decode_mxfp4(const uint8_t* p, int nb) {
  constexpr int kE2M1Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 17) {
    const double d = std::ldexp(1.0, p[0] - 128);
    for (int j = 0; j < 16; ++j) y.push_back(d * kE2M1Doubled[p[1 + j] & 15]);
    for (int j = 0; j < 16; ++j) y.push_back(d * kE2M1Doubled[p[1 + j] >> 4]);
  }
  return y;
}

// Trit k (most significant first) of a TQ1_0 byte b, which stands for the base-3 fraction
// b / 256 of 3^5: the integer part of b * 3^(k+1) / 256, modulo 3.
int tq1_trit(int b, int k) {
  int p = 3;
  for (int i = 0; i < k; ++i) p *= 3;
  return (b * p / 256) % 3;
}

std::vector<double> decode_tq1_0(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 54) {
    const double d = half_value(load_u16(p + 52));
    for (int k = 0; k < 5; ++k) {
      for (int m = 0; m < 32; ++m) y.push_back(d * (tq1_trit(p[m], k) - 1));
    }
    for (int k = 0; k < 5; ++k) {
      for (int m = 0; m < 16; ++m) y.push_back(d * (tq1_trit(p[32 + m], k) - 1));
    }
    for (int k = 0; k < 4; ++k) {
      for (int m = 0; m < 4; ++m) y.push_back(d * (tq1_trit(p[48 + m], k) - 1));
    }
  }
  return y;
}

std::vector<double> decode_tq2_0(const uint8_t* p, int nb) {
  std::vector<double> y;
  for (int i = 0; i < nb; ++i, p += 66) {
    const double d = half_value(load_u16(p + 64));
    for (int j = 0; j < 2; ++j) {
      for (int l = 0; l < 4; ++l) {
        for (int m = 0; m < 32; ++m) y.push_back(d * (((p[32 * j + m] >> (2 * l)) & 3) - 1));
      }
    }
  }
  return y;
}

// Formats whose every value is a small integer times a power of two or an fp16: the float
// result must be the float64 value exactly.
void expect_exact(DType t, const std::vector<uint8_t>& b, const std::vector<double>& want) {
  const std::vector<float> got = run(t, b);
  ASSERT_EQ(got.size(), want.size()) << dtype_name(t);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << dtype_name(t) << " element " << i;
}

void expect_matches(DType t, const std::vector<uint8_t>& b, const std::vector<double>& want) {
  const std::vector<float> got = run(t, b);
  ASSERT_EQ(got.size(), want.size()) << dtype_name(t);
  // float vs float64: a few roundings of terms no larger than the row's largest value.
  double amax = 0.0;
  for (double v : want) amax = std::fmax(amax, std::fabs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-6 * amax) << dtype_name(t) << " element " << i;
  }
}

TEST(Dequantize, RandomBlocksMatchLayoutDecoders) {
  const int nb = 16;
  auto b = random_blocks(DType::Q2_K, nb, {80, 82}, 1);
  expect_matches(DType::Q2_K, b, decode_q2_k(b.data(), nb));
  b = random_blocks(DType::Q3_K, nb, {108}, 2);
  expect_matches(DType::Q3_K, b, decode_q3_k(b.data(), nb));
  b = random_blocks(DType::Q4_K, nb, {0, 2}, 3);
  expect_matches(DType::Q4_K, b, decode_q45_k(b.data(), nb, false));
  b = random_blocks(DType::Q5_K, nb, {0, 2}, 4);
  expect_matches(DType::Q5_K, b, decode_q45_k(b.data(), nb, true));
  b = random_blocks(DType::Q6_K, nb, {208}, 5);
  expect_matches(DType::Q6_K, b, decode_q6_k(b.data(), nb));
  b = random_blocks(DType::IQ4_XS, nb, {0}, 6);
  expect_matches(DType::IQ4_XS, b, decode_iq4_xs(b.data(), nb));
  b = random_blocks(DType::Q4_0, nb, {0}, 7);
  expect_matches(DType::Q4_0, b, decode_legacy(DType::Q4_0, b.data(), nb));
  b = random_blocks(DType::Q4_1, nb, {0, 2}, 8);
  expect_matches(DType::Q4_1, b, decode_legacy(DType::Q4_1, b.data(), nb));
  b = random_blocks(DType::Q5_0, nb, {0}, 9);
  expect_matches(DType::Q5_0, b, decode_legacy(DType::Q5_0, b.data(), nb));
  b = random_blocks(DType::Q5_1, nb, {0, 2}, 10);
  expect_matches(DType::Q5_1, b, decode_legacy(DType::Q5_1, b.data(), nb));
  b = random_blocks(DType::IQ4_NL, nb, {0}, 11);
  expect_matches(DType::IQ4_NL, b, decode_legacy(DType::IQ4_NL, b.data(), nb));
  b = random_blocks(DType::TQ1_0, nb, {52}, 12);
  expect_exact(DType::TQ1_0, b, decode_tq1_0(b.data(), nb));
  b = random_blocks(DType::TQ2_0, nb, {64}, 13);
  expect_exact(DType::TQ2_0, b, decode_tq2_0(b.data(), nb));
  b = random_blocks(DType::MXFP4, 4 * nb, {}, 14);  // every byte random: e from 0 (subnormal d) up
  for (size_t i = 0; i < b.size(); i += 17) b[i] = static_cast<uint8_t>(b[i] % 251);  // 12 * 2^122 stays finite
  expect_exact(DType::MXFP4, b, decode_mxfp4(b.data(), 4 * nb));
}

TEST(Dequantize, FloatFormats) {
  const std::vector<uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0x00, 0x7C};
  const std::vector<float> y = run(DType::F16, f16);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 0x1p-24f);
  EXPECT_TRUE(std::isinf(y[3]));
  const std::vector<uint8_t> bf16 = {0x80, 0x3F, 0x49, 0xC0};
  const std::vector<float> z = run(DType::BF16, bf16);
  EXPECT_EQ(z[0], 1.0f);
  EXPECT_EQ(z[1], -3.140625f);  // 0xC049
}

}  // namespace
}  // namespace ox
