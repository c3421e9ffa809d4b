// Slots for relaxed-SIMD kernels. Each is an ordinary SIMD128 function, called through a pointer
// (so that no optimizer inlines it, drops a parameter or specializes it), whose body
// wasm/tools/splice_relaxed.mjs replaces with a hand-written one (kernels/simd128/relaxed/*.wat)
// in a second copy of the linked module, oxidize.relaxed.wasm, loaded where the engine validates
// relaxed SIMD. The two bodies compute the same bits: the relaxed one only multiplies 16 bytes
// at a time where SIMD128 multiplies 8 i16 lanes, on operands whose relaxed results are defined.
// One exception, wide_tile, whose kernel is free to round differently (KernelTable::gemm_wide).
#pragma once

#include <wasm_simd128.h>

#include <cstdint>

#include "core/quant/blocks.h"

namespace ox::kernels::simd128 {

// Rows r and r + pairs of a Q4_K (q4_k_pairs), Q5_K (q5_k_pairs) or Q6_K (q6_k_pairs) matrix (w,
// rows w_stride bytes apart, nb super-blocks each) against one token's Q8_K activations y, for
// r < pairs: out[r] and out[r + pairs]. act is y split by gemm::split_acts_q8_k (read by the SIMD128
// bodies, kquant::rows2_q4_k / _q5_k / _q6_k per pair; null while the relaxed bodies run, which read
// y itself), k the table relaxed_constants (read by the relaxed bodies).
using PairsFn = void (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y,
                         const v128_t* act, const v128_t* k, float* out);
extern PairsFn q4_k_pairs;
extern PairsFn q5_k_pairs;
extern PairsFn q6_k_pairs;
// IQ4_XS (iq4_xs_pairs) the same way: kquant::rows2_iq4_xs per pair, one float step per super-block;
// the relaxed body takes sum(a) per sub-block from y's bsums, which must be y's sums (as quantized).
extern PairsFn iq4_xs_pairs;

// The same for the interleaved layouts (core/quant/interleave.h): rows r and r + pairs of a Q4_K_IL
// (q4_k_il_pairs) or Q6_K_IL (q6_k_il_pairs) matrix against one token, y in Q8_K's order (read by
// the SIMD128 bodies, which put the rows back in natural order and run kquant::rows2_q4_k, or
// quant::vec_dot_q6_k_il_q8_k row by row) and y_il in the layout's (acts_q4_k_il / acts_q6_k_il in
// interleave.h, read by the relaxed bodies). The relaxed bodies give the same bits: Q4_K_IL's those
// of rows2_q4_k, Q6_K_IL's those of the scalar reference (one float term per block).
using PairsIlFn = void (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y,
                           const BlockQ8_K* y_il, const v128_t* k, float* out);
extern PairsIlFn q4_k_il_pairs;
extern PairsIlFn q6_k_il_pairs;

// Decode rows of a Q4_0 (q4_0_quads) or Q8_0 (q8_0_quads) matrix (w, rows w_stride bytes apart, nb
// blocks each) against one token's Q8_0 activations a, four rows at a time: group g < groups is rows
// g * g_step + j * j_step (j < 4) and out[that row] receives its dot. act_q, d and sum are a split by
// gemm::split_acts_block32 (the SIMD128 bodies read act_q; both read each block's scale d as float,
// q4_0_quads also the sum of its quants; the relaxed bodies read a's quants); k the table
// relaxed_constants. Returns groups, or the first group it left undone: the relaxed Q4_0 body (and
// the U8QuadsFn and Q5QuadsFn ones below) convert the fp16 d by a short path that is exact for every
// finite half and stop at a group whose scales hold an Inf or NaN (nothing of it stored), which the
// caller takes another way; q8_0_quads.wat tests every block's scales and finishes every group.
// Defined in gemm_block32.cpp, whose decode path they are.
using QuadsFn = int32_t (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step,
                         int32_t j_step, const BlockQ8_0* a, const v128_t* act_q, const float* d, const int32_t* sum,
                         const v128_t* k, float* out);
extern QuadsFn q4_0_quads;
extern QuadsFn q8_0_quads;
// IQ4_NL (iq4_nl_quads) in QuadsFn's groups, against a's quants split by sign: per block four
// vectors in `signs` (|quant| of elements 0..15, of 16..31, then 0xFF where the quant is negative,
// else 0, for the same halves) and neg_sum[i], the sum of block i's negative quants. No quant may
// be -128 (its magnitude is no i7 operand; gemm_block32.cpp runs decode_groups instead). The
// SIMD128 body (decode_groups) reads act_q and d; the relaxed body (iq4_nl_quads.wat) signs,
// neg_sum and d, with each codebook value, its sign flipped where the activation's is, against
// |a|: one relaxed dot per 16 products.
using Iq4NlQuadsFn = void (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step,
                              int32_t j_step, const v128_t* signs, const v128_t* act_q, const float* d,
                              const int32_t* neg_sum, const v128_t* k, float* out);
extern Iq4NlQuadsFn iq4_nl_quads;
// Decode slots for engines whose i32x4.relaxed_dot_i8x16_i7x16_add_s multiplies its second operand
// as an unsigned byte exactly (u8_dot_exact below; V8 on x86 with AVX-VNNI: one vpdpbusd for the 16
// products, their sums and the add), in QuadsFn's groups and with its return. The relaxed bodies read
// the token as u8_records: per block 48 bytes, its 32 quants, -offset * their sum (i32), its d (f32)
// and 8 zero bytes; the SIMD128 bodies (decode_groups) act_q, d and sum. Called only where
// u8_dot_exact() holds; any quant, -128 included. IQ4_NL (iq4_nl_u8_quads.wat): each codebook value
// + 128 (1..241) is the unsigned operand, offset 128; Q4_0 (q4_0_u8_quads.wat): the nibbles, offset 8.
using U8QuadsFn = int32_t (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step,
                              int32_t j_step, const v128_t* records, const v128_t* act_q, const float* d,
                              const int32_t* sum, const v128_t* k, float* out);
extern U8QuadsFn iq4_nl_u8_quads;
extern U8QuadsFn q4_0_u8_quads;
// A token's nb Q8_0 blocks (a) as u8_records with `offset`, in per-thread scratch; d and sum from
// gemm::split_acts_block32 of the same blocks. Defined in gemm_block32.cpp.
const v128_t* u8_records(int64_t nb, const uint8_t* a, const float* d, const int32_t* sum, int offset);

// Decode rows of a Q5_0 (q5_0_quads, against Q8_0 activations) or Q5_1 (q5_1_quads, against Q8_1)
// matrix, four rows at a time in QuadsFn's groups. a is the token's activation blocks (Q8_0 or
// Q8_1); act_q, d, s and sum are a split by gemm::split_acts_block32 (s: Q8_1's s as float, Q5_1
// only; sum: Q5_0 only) and fifth the fifth-bit tables of gemm_block32.cpp's fifth_bit_sums
// (per activation block four 256-entry tables: entry v is the sum of the quants 8p..8p+7 whose
// bit is set in v). The SIMD128 bodies (decode_groups) read act_q and fifth and take a block's
// integer dot as nibbles . a + 16 * (the four entries its qh bytes pick), and so does Q5_1's
// relaxed body with the nibbles as the i7 operand (reading a's quants); Q5_0's relaxed body builds
// each value whole instead (nibble + 16 * qh bit, the i7 operand) and gets fifth null. Q5_0 then
// takes 16 * sum(a) off; then decode_groups' float steps. Returns groups, or the first group it left
// undone (QuadsFn's contract: an Inf or NaN among the group's d or m). Defined in gemm_block32.cpp.
using Q5QuadsFn = int32_t (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step,
                           int32_t j_step, const uint8_t* a, const v128_t* act_q, const float* d, const float* s,
                           const int32_t* sum, const int16_t* fifth, const v128_t* k, float* out);
extern Q5QuadsFn q5_0_quads;
extern Q5QuadsFn q5_1_quads;

// Rows r and r + pairs of a TQ2_0 matrix (w, rows w_stride bytes apart, nb super-blocks each)
// against one token's Q8_K activations y, for r < pairs: out[r] and out[r + pairs]. Each block's
// integer dot is taken as sum(code * a) - sum(a), the codes 0..3 as stored (the reference's t - 1,
// code 3 giving 2), a_sum[i] being the sum of block i's quants; then vec_dot_tq2_0_q8_k's float steps.
// act is y split by gemm::split_acts_q8_k (read by the SIMD128 body; null while the relaxed body
// runs, which reads y itself with the codes as the i7 operand). Defined in tq_dot.cpp.
using Tq2_0PairsFn = void (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y,
                              const v128_t* act, const int32_t* a_sum, float* out);
extern Tq2_0PairsFn tq2_0_pairs;

// Rows r and r + pairs of an IQ2_S, IQ3_XXS or IQ3_S matrix (w, rows w_stride bytes apart, nb
// super-blocks each) against one token's Q8_K activations y, for r < pairs: out[r] and
// out[r + pairs], the bits of iquant::row (iquant_impl.h, which the SIMD128 bodies run per row).
// grid is the format's grid (quant::kIQ2SGrid, kIQ3XXSGrid, kIQ3SGrid) and masks its sign fields
// as byte masks (iquant::kSignMasks8, kSignMasks7), read by the relaxed bodies. Defined in iquant.cpp.
using IqPairsFn = void (*)(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y,
                           const void* grid, const uint64_t* masks, float* out);
extern IqPairsFn iq2_s_pairs;
extern IqPairsFn iq3_xxs_pairs;
extern IqPairsFn iq3_s_pairs;

// One 2 x 4 tile of the byte-group prefill (gemm_i7.h): y[t * y_stride + r] for weight rows r < 2
// and tokens t < 4 of n_groups byte groups at w and a (packed in blocks of 2 and 4 rows). The
// relaxed body multiplies with i16x8.relaxed_dot_i8x16_i7x16_s, the weights the i7 operand, and
// adds a group's pair sums in i16, so the weights must be 0..15. Defined in gemm_i7.cpp.
using I7TileFn = void (*)(int32_t n_groups, const v128_t* w, const v128_t* a, float* y, int32_t y_stride);
extern I7TileFn i7_tile;
// The same tile where u8_dot_exact() holds, with i32x4.relaxed_dot_i8x16_i7x16_add_s: the weights
// may be any byte 0..255 (IQ4_NL's codebook values + 128; Q4_0's nibbles), summed in i32 lanes.
// Called only there (the SIMD128 body takes any byte too). Defined in gemm_i7.cpp.
extern I7TileFn u8_tile;
// The same over Q4_K super-blocks (gemm_i7.h's i7_superblock_product): n_groups counts super-blocks,
// each two byte groups whose i16 pair sums are multiplied by the sub-block scales (i32x4.dot_i16x8_s)
// and added before one float step and the two min terms. Defined in gemm_i7.cpp.
extern I7TileFn i7_superblock_tile;
// The u8 super-blocks of gemm_i7.h (IQ4_XS's codebook values + 128) where u8_dot_exact() holds:
// i32x4.relaxed_dot_i8x16_i7x16_add_s per group into i32 unit dots, times the signed sub-block
// scales, one float step per super-block. Defined in gemm_i7.cpp.
extern I7TileFn u8_superblock_tile;

// The main tile of gemm_wide[F32] (gemm_wide.cpp over kernels/gemm_float_outer.h): rows w0 and
// w1 (n floats each, any alignment) against a panel of 16 tokens packed k-major (panel[k * 16 + t]),
// summed in index order into cells[r * 16 + t]. The relaxed body takes each product and sum in one
// f32x4.relaxed_madd (one fused multiply-add where the CPU has FMA, V8 on x86 then needing no
// register for the product), the SIMD128 body in two steps: the bodies agree within float rounding
// only, which gemm_wide allows (an encoder's order-free pass), and the test against the reference
// (tests/kernels) runs in both modules.
using WideTileFn = void (*)(int32_t n, const uint8_t* w0, const uint8_t* w1, const float* panel, float* cells);
extern WideTileFn wide_tile;

// Rows r and r + pairs of a Q2_K (q2_k_pairs) or Q3_K (q3_k_pairs) matrix against one token's Q8_K
// activations: PairsFn's contract, the SIMD128 bodies kquant::rows2_q2_k / rows2_q3_k
// (rows2_q2_q3.h), k the table relaxed_constants.
extern PairsFn q2_k_pairs;
extern PairsFn q3_k_pairs;
// Q2_K_IL / Q3_K_IL (q2_k_il_pairs / q3_k_il_pairs, core/quant/interleave.h) as PairsIlFn: y_il from
// acts_q2_k_il (read by the relaxed bodies); the SIMD128 bodies put the rows back in natural order
// and run rows2_q2_k / rows2_q3_k, whose bits the relaxed bodies give.
extern PairsIlFn q2_k_il_pairs;
extern PairsIlFn q3_k_il_pairs;

// 1 in oxidize.relaxed.wasm, 0 in the plain module (the kernel table's isa names which ran).
using RelaxedActiveFn = int32_t (*)();
extern RelaxedActiveFn relaxed_active_slot;
inline bool relaxed_active() { return relaxed_active_slot() == 1; }

// The relaxed body returns lane 0 of i32x4.relaxed_dot_i8x16_i7x16_add_s(splat(s), splat(u),
// splat(c)); the SIMD128 body a value no probe expects. u8_dot_exact() (relaxed_slots.cpp) is true
// where that dot gives 4 u s + c for second operands u of 128..255 (unsigned, no saturation), as
// V8's vpdpbusd does on x86 with AVX-VNNI; the spec leaves those operands implementation-defined,
// and pmaddubsw's saturating pairs (x86 without it) or a signed sdot (ARM) give other values. Both
// of V8's tiers lower the instruction through one macro-assembler routine, so a probe run once
// speaks for the optimized bodies too. Checked once per module, then cached.
using U8DotProbeFn = int32_t (*)(int32_t u, int32_t s, int32_t c);
extern U8DotProbeFn u8_dot_probe;
bool u8_dot_exact();

// The vector constants of the relaxed bodies, at the offsets their .wat files read them from.
extern v128_t relaxed_constants[32];

}  // namespace ox::kernels::simd128
