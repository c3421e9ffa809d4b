// The interleaved layouts Q4_K_IL, Q6_K_IL, Q2_K_IL and Q3_K_IL (dtype.h): Q4_K, Q6_K, Q2_K and Q3_K blocks whose quants are
// permuted, in place and at the same size, so that a 16-byte vector of them pairs with activations
// in 16-bit lanes that alternate between two sub-blocks. A dot product then adds the pair sums of
// two sub-blocks in one i16 vector and applies both scales in one i32x4.dot_i16x8_s, against a
// scale vector [s_a, s_b, s_a, s_b, ...]; the natural layout needs one such step per sub-block.
//
// il16(a, b), for eight bytes a and eight bytes b, is [a0 a1 b0 b1 a2 a3 b2 b3 ... a6 a7 b6 b7]
// (what a 16-bit unpack-low of a and b gives).
//
// Q4_K_IL: d, dmin and scales as in Q4_K. Each 32-byte run of qs (Q4_K chunk c: elements 64c..64c+63,
// sub-block 2c in the low nibbles of the 32 bytes, 2c + 1 in the high ones) holds, with A and B the
// 32 low and 32 high nibbles of that run in Q4_K order,
//   bytes 0..15:  low nibbles il16(A[0..7], B[0..7]),    high nibbles il16(A[8..15], B[8..15])
//   bytes 16..31: low nibbles il16(A[16..23], B[16..23]), high nibbles il16(A[24..31], B[24..31]).
// Its activations: the run's 64 Q8_K values y as il16(y[0..7], y[32..39]), il16(y[8..15], y[40..47]),
// il16(y[16..23], y[48..55]), il16(y[24..31], y[56..63]).
//
// Q6_K_IL: scales and d as in Q6_K. Every 32-byte run R of ql (4 runs) and of qh (2 runs) becomes
// il16(R[0..7], R[16..23]), il16(R[8..15], R[24..31]); byte l of a run serves element l of 32 in each
// of its planes, and elements 0..15 / 16..31 are two sub-blocks. Its activations: every 32 Q8_K
// values permuted the same way.
//
// Q2_K_IL: scales, d and dmin as in Q2_K. Byte 16b + 2m + e of qs (b, m < 8, e < 2) holds at bits
// 2j..2j+1 element 2p + e of sub-block 8g + m (elements 16(8g + m) + 2p + e), g = j & 1, p = 2b + j / 2:
// a plane j of 16 bytes has sub-block 8g + m in its i16 lane m, planes 0 and 2 sub-blocks 0..7,
// planes 1 and 3 sub-blocks 8..15. Its activations: the 16-byte vector 8g + p of a block's quants
// holds at bytes 2m + e the values 16(8g + m) + 2p + e (per group g, an 8 x 8 transpose of i16 pairs).
//
// Q3_K_IL: scales and d as in Q3_K, qs as Q2_K_IL's, and the high bit of the element whose low bits
// are at bits 2j of qs[byte] at bit 4 (byte / 32) + j of hmask[byte % 32] (where Q3_K keeps it for
// its own qs). Its activations: Q2_K_IL's.
#pragma once

#include <cstdint>

namespace ox::quant {

// In place, n_blocks blocks: the natural layout to the interleaved one and back.
void q4_k_to_il(void* blocks, int64_t n_blocks);
void q4_k_from_il(void* blocks, int64_t n_blocks);
void q6_k_to_il(void* blocks, int64_t n_blocks);
void q6_k_from_il(void* blocks, int64_t n_blocks);
void q2_k_to_il(void* blocks, int64_t n_blocks);
void q2_k_from_il(void* blocks, int64_t n_blocks);
void q3_k_to_il(void* blocks, int64_t n_blocks);
void q3_k_from_il(void* blocks, int64_t n_blocks);

// References: each block back in natural order, then Q4_K's / Q6_K's reference. The dot products
// add one term per block in block order, so they give Q4_K's / Q6_K's bits.
void dequantize_q4_k_il(const void* x, float* y, int64_t n);
void vec_dot_q4_k_il_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q6_k_il(const void* x, float* y, int64_t n);
void vec_dot_q6_k_il_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q2_k_il(const void* x, float* y, int64_t n);
void vec_dot_q2_k_il_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q3_k_il(const void* x, float* y, int64_t n);
void vec_dot_q3_k_il_q8_k(int64_t n, float* s, const void* x, const void* y);

}  // namespace ox::quant
