// SIMD128 side of the interleaved layouts Q4_K_IL, Q6_K_IL, Q2_K_IL and Q3_K_IL (core/quant/interleave.h): the
// in-place weight conversions (KernelTable::relayout) and the activation order their dot products
// pair with, built once per call.
#pragma once

#include <wasm_simd128.h>

#include <cstdint>

#include "core/quant/blocks.h"

namespace ox::kernels::simd128 {

// il16 of the low (high) eight bytes of a and b: [a0 a1 b0 b1 a2 a3 b2 b3 ...] (a 16-bit unpack).
inline v128_t il16_low(v128_t a, v128_t b) { return wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11); }
inline v128_t il16_high(v128_t a, v128_t b) { return wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15); }

// In place, bytes identical to quant::q4_k_to_il / q6_k_to_il.
void relayout_q4_k_il(void* blocks, int64_t n_blocks);
void relayout_q6_k_il(void* blocks, int64_t n_blocks);
// In place, bytes identical to quant::q2_k_to_il / q3_k_to_il.
void relayout_q2_k_il(void* blocks, int64_t n_blocks);
void relayout_q3_k_il(void* blocks, int64_t n_blocks);
// The 16 sub-blocks of a Q2_K_IL / Q3_K_IL block (hmask null for Q2_K_IL): sub[k] holds sub-block k's
// 16 stored values in element order (Q2_K's quants 0..3, Q3_K's u = low2 | hbit << 2, 0..7).
void q2_q3_sub_blocks(const uint8_t* qs, const uint8_t* hmask, v128_t sub[16]);

// One token's Q8_K row of n elements (at a) with its quants in Q4_K_IL's / Q6_K_IL's order (d and
// bsums as they were), in per-thread scratch.
const BlockQ8_K* acts_q4_k_il(int64_t n, const uint8_t* a);
const BlockQ8_K* acts_q6_k_il(int64_t n, const uint8_t* a);
const BlockQ8_K* acts_q2_k_il(int64_t n, const uint8_t* a);  // Q2_K_IL's and Q3_K_IL's

}  // namespace ox::kernels::simd128
