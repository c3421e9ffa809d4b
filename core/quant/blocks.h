// Block layouts of the quantized formats, byte for byte as GGUF stores them.
// `d`/`dmin` fields are IEEE half (stored as uint16_t) unless noted; x ~= d * q (+ m).
#pragma once

#include <cstdint>

namespace ox {

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;
inline constexpr int kQK_K = 256;     // super-block size of the K-quants and IQ4_XS
inline constexpr int kKScaleSize = 12;  // packed 6-bit scales/mins of Q4_K/Q5_K
inline constexpr int kQK4_NL = 32;

// x[i] = d * (q[i] - 8); low nibbles hold elements 0..15, high nibbles 16..31.
struct BlockQ4_0 { uint16_t d; uint8_t qs[kQK4_0 / 2]; };
// x[i] = d * q[i] + m.
struct BlockQ4_1 { uint16_t d; uint16_t m; uint8_t qs[kQK4_1 / 2]; };
// 5th bit of element i in bit i of qh (little-endian u32); x[i] = d * (q[i] - 16).
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[kQK5_0 / 2]; };
struct BlockQ5_1 { uint16_t d; uint16_t m; uint8_t qh[4]; uint8_t qs[kQK5_1 / 2]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[kQK8_0]; };
// Activation format for Q4_1/Q5_1: s = d * sum(qs) lets the dot product fold in the weight's m.
struct BlockQ8_1 { uint16_t d; uint16_t s; int8_t qs[kQK8_1]; };

// 16 sub-blocks of 16: 4-bit scale (low) and 4-bit min (high) per sub-block, 2-bit quants.
struct BlockQ2_K { uint8_t scales[kQK_K / 16]; uint8_t qs[kQK_K / 4]; uint16_t d; uint16_t dmin; };
// 2 low bits in qs, high bit in hmask, 16 6-bit scales packed into 12 bytes.
struct BlockQ3_K { uint8_t hmask[kQK_K / 8]; uint8_t qs[kQK_K / 4]; uint8_t scales[12]; uint16_t d; };
// 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes.
struct BlockQ4_K { uint16_t d; uint16_t dmin; uint8_t scales[kKScaleSize]; uint8_t qs[kQK_K / 2]; };
struct BlockQ5_K { uint16_t d; uint16_t dmin; uint8_t scales[kKScaleSize]; uint8_t qh[kQK_K / 8]; uint8_t qs[kQK_K / 2]; };
// 4 low bits in ql, 2 high bits in qh, 16 signed 8-bit scales; x = d * scale * (q - 32).
struct BlockQ6_K { uint8_t ql[kQK_K / 2]; uint8_t qh[kQK_K / 4]; int8_t scales[kQK_K / 16]; uint16_t d; };
// Activation format of the K-quants: float scale, and sums of each 16 quants for the min terms.
struct BlockQ8_K { float d; int8_t qs[kQK_K]; int16_t bsums[kQK_K / 16]; };

// 4-bit indices into the non-linear table kIQ4NLValues; x[i] = d * table[q[i]].
struct BlockIQ4_NL { uint16_t d; uint8_t qs[kQK4_NL / 2]; };
// 8 sub-blocks of 32 with 6-bit scales (low 4 bits in scales_l, high 2 in scales_h); x = d * (ls - 32) * table[q].
struct BlockIQ4_XS { uint16_t d; uint16_t scales_h; uint8_t scales_l[kQK_K / 64]; uint8_t qs[kQK_K / 2]; };

// ---- IQ2 (core/quant/iq2.cpp): super-blocks of 256 in groups of 8 elements ("octets"). An octet is
// one codebook entry of iq2_grids.h (8 magnitudes of 8, 25 or 43) plus 8 signs, times a 4-bit scale
// ls of its 32-group (IQ2_XXS) or 16-group (IQ2_XS, IQ2_S): x = d * (0.5 + ls) / 4 * grid * sign.
// Per 32 elements, 4 grid bytes then a u32: octet k's 7 sign bits at 7k, ls in bits 28..31.
struct BlockIQ2_XXS { uint16_t d; uint16_t qs[kQK_K / 8]; };
// Per octet a u16: 9-bit grid index, 7 sign bits above it; ls of 16-group i in nibble i%2 of scales[i/2].
struct BlockIQ2_XS { uint16_t d; uint16_t qs[kQK_K / 8]; uint8_t scales[kQK_K / 32]; };
// qs[0..31]: low 8 bits of octet k's 10-bit grid index; qs[32..63]: its 8 sign bits; bits 8..9 of
// the index in bits 2(k%4).. of qh[k/4]; ls as in IQ2_XS.
struct BlockIQ2_S { uint16_t d; uint8_t qs[kQK_K / 4]; uint8_t qh[kQK_K / 32]; uint8_t scales[kQK_K / 32]; };

static_assert(sizeof(BlockQ4_0) == 18, "GGUF q4_0 layout");
static_assert(sizeof(BlockQ4_1) == 20, "GGUF q4_1 layout");
static_assert(sizeof(BlockQ5_0) == 22, "GGUF q5_0 layout");
static_assert(sizeof(BlockQ5_1) == 24, "GGUF q5_1 layout");
static_assert(sizeof(BlockQ8_0) == 34, "GGUF q8_0 layout");
static_assert(sizeof(BlockQ8_1) == 36, "GGUF q8_1 layout");
static_assert(sizeof(BlockQ2_K) == 84, "GGUF q2_K layout");
static_assert(sizeof(BlockQ3_K) == 110, "GGUF q3_K layout");
static_assert(sizeof(BlockQ4_K) == 144, "GGUF q4_K layout");
static_assert(sizeof(BlockQ5_K) == 176, "GGUF q5_K layout");
static_assert(sizeof(BlockQ6_K) == 210, "GGUF q6_K layout");
static_assert(sizeof(BlockQ8_K) == 292, "GGUF q8_K layout");
static_assert(sizeof(BlockIQ4_NL) == 18, "GGUF iq4_nl layout");
static_assert(sizeof(BlockIQ4_XS) == 136, "GGUF iq4_xs layout");
static_assert(sizeof(BlockIQ2_XXS) == 66, "GGUF iq2_xxs layout");
static_assert(sizeof(BlockIQ2_XS) == 74, "GGUF iq2_xs layout");
static_assert(sizeof(BlockIQ2_S) == 82, "GGUF iq2_s layout");

// The 16 non-linear levels shared by IQ4_NL and IQ4_XS.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace ox
