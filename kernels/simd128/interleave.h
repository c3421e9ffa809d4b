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
// In place, bytes identical to quant::q2_k_to_il / q3_k_to_il; q2_k_natural / q3_k_natural give one
// block back in Q2_K's / Q3_K's order.
void relayout_q2_k_il(void* blocks, int64_t n_blocks);
void relayout_q3_k_il(void* blocks, int64_t n_blocks);
BlockQ2_K q2_k_natural(const BlockQ2_K& b);
BlockQ3_K q3_k_natural(const BlockQ3_K& b);

// One token's Q8_K row of n elements (at a) with its quants in Q4_K_IL's / Q6_K_IL's order (d and
// bsums as they were), in per-thread scratch.
const BlockQ8_K* acts_q4_k_il(int64_t n, const uint8_t* a);
const BlockQ8_K* acts_q6_k_il(int64_t n, const uint8_t* a);
const BlockQ8_K* acts_q2_k_il(int64_t n, const uint8_t* a);  // Q2_K_IL's and Q3_K_IL's

}  // namespace ox::kernels::simd128
