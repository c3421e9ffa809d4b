// SIMD128 side of the interleaved layouts Q4_K_IL and Q6_K_IL (core/quant/interleave.h): the
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

// One token's Q8_K row of n elements (at a) with its quants in Q4_K_IL's / Q6_K_IL's order (d and
// bsums as they were), in per-thread scratch.
const BlockQ8_K* acts_q4_k_il(int64_t n, const uint8_t* a);
const BlockQ8_K* acts_q6_k_il(int64_t n, const uint8_t* a);

}  // namespace ox::kernels::simd128
