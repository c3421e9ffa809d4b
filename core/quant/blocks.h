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
inline constexpr int kQKMXFP4 = 32;

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
// ---- grid i-quants: groups of 4 (IQ3) or 8 (IQ1) values are one codebook entry (core/quant/
// iq_grids_iq3_iq1.h); super-blocks of 256 in sub-blocks of 32.
// IQ3_XXS: qs[0..63] are 8-bit indices into kIQ3XXSGrid (4 magnitudes each); qs[64..95] hold one
// little-endian u32 per sub-block: four 7-bit sign fields (kIQ2Signs gives the 8 signs of a
// group of 8) in bits 0..27 and a 4-bit scale s in bits 28..31; x = d * (0.5 + s) * 0.5 * grid * sign.
struct BlockIQ3_XXS { uint16_t d; uint8_t qs[3 * kQK_K / 8]; };
// IQ3_S: 9-bit indices into kIQ3SGrid (low 8 bits in qs, bit 8 of group k of sub-block ib in bit k
// of qh[ib]), one sign bit per value, 4-bit scales s (two per byte, sub-block 2i low nibble);
// x = d * (1 + 2 s) * grid * sign.
struct BlockIQ3_S { uint16_t d; uint8_t qs[kQK_K / 4]; uint8_t qh[kQK_K / 32]; uint8_t signs[kQK_K / 8]; uint8_t scales[kQK_K / 64]; };
// IQ1_S: 11-bit indices into kIQ1SGrid (8 values in {-1, 0, 1}): low 8 bits in qs, 3 high bits of
// group l of sub-block ib in bits 3l..3l+2 of qh[ib]; qh bits 12..14 hold a 3-bit scale s, bit 15
// the delta's sign; x = d * (2 s + 1) * (grid +- kIQ1SDelta).
struct BlockIQ1_S { uint16_t d; uint8_t qs[kQK_K / 8]; uint16_t qh[kQK_K / 32]; };
// IQ1_M: indices as IQ1_S, the 3 high bits of group 2j / 2j+1 in bits 0..2 / 4..6 of qh[j], bits
// 3 / 7 the sign of that group's delta; a 3-bit scale per 16 values (four per little-endian u16 of
// scales, in bits 0..11) and the fp16 super-block scale d split over the four top nibbles
// (bits 12..15 of u16 i hold bits 4i..4i+3 of d); x = d * (2 s + 1) * (grid +- kIQ1MDelta).
struct BlockIQ1_M { uint8_t qs[kQK_K / 8]; uint8_t qh[kQK_K / 16]; uint8_t scales[kQK_K / 32]; };
// ---- MXFP4 (OCP microscaling FP4) and the ternary formats TQ1_0 / TQ2_0 (BitNet b1.58, TriLMs)

// 4-bit E2M1 codes with one shared power-of-two scale: x[i] = 2^(e - 128) * kMXFP4Values[q[i]]
// (the table holds twice the E2M1 value, hence 128 rather than E8M0's bias 127). e is E8M0: a
// biased exponent, no sign, no mantissa. Nibbles as Q4_0: low = elements 0..15, high = 16..31.
struct BlockMXFP4 { uint8_t e; uint8_t qs[kQKMXFP4 / 2]; };
// Trits t in {0, 1, 2} standing for t - 1, packed base 3 as fixed-point fractions of a byte: a byte
// holding trits t0..t4 is ceil(256 * (t0 t1 t2 t3 t4)_3 / 243), so trit k is the integer part of
// 3 * (byte * 3^k mod 256) / 256. qs: bytes 0..31 carry elements 0..159 (element 32k + m is trit k
// of byte m), bytes 32..47 elements 160..239 (160 + 16k + m, trit k of byte 32 + m); qh: four trits
// per byte (the fifth 0), element 240 + 4k + m is trit k of qh[m]. x = d * (t - 1).
struct BlockTQ1_0 { uint8_t qs[(kQK_K - 4 * kQK_K / 64) / 5]; uint8_t qh[kQK_K / 64]; uint16_t d; };
// 2-bit codes q standing for q - 1 (the code 3, never written by the quantizer, decodes as 2):
// element 128j + 32l + m sits at bits 2l..2l+1 of qs[32j + m]. x = d * (q - 1).
struct BlockTQ2_0 { uint8_t qs[kQK_K / 4]; uint16_t d; };

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
static_assert(sizeof(BlockIQ3_XXS) == 98, "GGUF iq3_xxs layout");
static_assert(sizeof(BlockIQ3_S) == 110, "GGUF iq3_s layout");
static_assert(sizeof(BlockIQ1_S) == 50, "GGUF iq1_s layout");
static_assert(sizeof(BlockIQ1_M) == 56, "GGUF iq1_m layout");
static_assert(sizeof(BlockMXFP4) == 17, "GGUF mxfp4 layout");
static_assert(sizeof(BlockTQ1_0) == 54, "GGUF tq1_0 layout");
static_assert(sizeof(BlockTQ2_0) == 66, "GGUF tq2_0 layout");

// The 16 non-linear levels shared by IQ4_NL and IQ4_XS.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// The 16 E2M1 codes of MXFP4, doubled to integers: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// MXFP4's block scale 2^(e - 128) as a float, built from its bits: exact for every e (e = 0 and 1
// give the subnormals 2^-128 and 2^-127; e = 255, E8M0's NaN, gives 2^127 as in llama.cpp).
// `static`: the SIMD folders include this header under their own -m flags, and an inline
// function's one shared copy could come from any of them.
static inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

}  // namespace ox
