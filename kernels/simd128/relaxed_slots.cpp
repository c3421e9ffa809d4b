// The SIMD128 bodies of the relaxed-SIMD slots (relaxed_slots.h) and their constant table.
#include "kernels/simd128/relaxed_slots.h"

#include <cstring>
#include <vector>

#include "core/quant/interleave.h"
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/rows2_q2_q3.h"
#include "kernels/simd128/util.h"

namespace {

// The SIMD128 body of a pairs slot: rows2 (kquant::rows2_q4_k / _q6_k / _iq4_xs) on rows r and r + pairs.
template <typename Block, auto rows2>
void pairs_body(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const ox::BlockQ8_K* y,
                const v128_t* act, float* out) {
  using namespace ox::kernels::simd128;
  const kquant::Consts consts = kquant::opaque_consts();
  const Fp16Consts half = fp16_consts();
  auto row = [&](int32_t r) { return reinterpret_cast<const Block*>(w + static_cast<uint32_t>(r) * w_stride); };
  for (int32_t r = 0; r < pairs; ++r) rows2(nb, row(r), row(r + pairs), y, act, consts, half, out + r, out + r + pairs);
}

// Row r of a matrix (nb blocks, rows w_stride bytes apart) copied into `out` in natural order.
template <typename Block, void (*from_il)(void*, int64_t)>
const Block* natural_row(const uint8_t* w, uint32_t w_stride, int32_t r, int32_t nb, std::vector<Block>& out) {
  out.resize(static_cast<size_t>(nb));
  std::memcpy(out.data(), w + static_cast<uint32_t>(r) * w_stride, sizeof(Block) * static_cast<size_t>(nb));
  from_il(out.data(), nb);
  return out.data();
}

}  // namespace

// The splice finds these functions by name: C linkage keeps the names plain.
extern "C" __attribute__((noinline)) void ox_simd128_q4_k_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t pairs, const ox::BlockQ8_K* y,
                                                                const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockQ4_K, ox::kernels::simd128::kquant::rows2_q4_k>(nb, w, w_stride, pairs, y, act, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_q5_k_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t pairs, const ox::BlockQ8_K* y,
                                                                const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockQ5_K, ox::kernels::simd128::kquant::rows2_q5_k>(nb, w, w_stride, pairs, y, act, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_q6_k_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t pairs, const ox::BlockQ8_K* y,
                                                                const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockQ6_K, ox::kernels::simd128::kquant::rows2_q6_k>(nb, w, w_stride, pairs, y, act, out);
}

extern "C" __attribute__((noinline)) void ox_simd128_iq4_xs_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                  int32_t pairs, const ox::BlockQ8_K* y,
                                                                  const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockIQ4_XS, ox::kernels::simd128::kquant::rows2_iq4_xs>(nb, w, w_stride, pairs, y, act, out);
}

extern "C" __attribute__((noinline)) void ox_simd128_q4_k_il_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                   int32_t pairs, const ox::BlockQ8_K* y,
                                                                   const ox::BlockQ8_K*, const v128_t*, float* out) {
  using namespace ox::kernels::simd128;
  if (nb <= 0 || pairs <= 0) return;
  thread_local std::vector<ox::BlockQ4_K> row0, row1;
  const v128_t* act = gemm::split_acts_q8_k(static_cast<int64_t>(nb) * ox::kQK_K, reinterpret_cast<const uint8_t*>(y));
  for (int32_t r = 0; r < pairs; ++r) {
    const ox::BlockQ4_K* x0 = natural_row<ox::BlockQ4_K, ox::quant::q4_k_from_il>(w, w_stride, r, nb, row0);
    const ox::BlockQ4_K* x1 = natural_row<ox::BlockQ4_K, ox::quant::q4_k_from_il>(w, w_stride, r + pairs, nb, row1);
    kquant::rows2_q4_k(nb, x0, x1, y, act, kquant::opaque_consts(), fp16_consts(), out + r, out + r + pairs);
  }
}
extern "C" __attribute__((noinline)) void ox_simd128_q6_k_il_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                   int32_t pairs, const ox::BlockQ8_K* y,
                                                                   const ox::BlockQ8_K*, const v128_t*, float* out) {
  if (nb <= 0) return;
  for (int32_t r = 0; r < 2 * pairs; ++r) {
    const uint8_t* row = w + static_cast<uint32_t>(r) * w_stride;
    ox::quant::vec_dot_q6_k_il_q8_k(static_cast<int64_t>(nb) * ox::kQK_K, out + r, row, y);
  }
}

extern "C" __attribute__((noinline)) void ox_simd128_q2_k_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t pairs, const ox::BlockQ8_K* y,
                                                                const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockQ2_K, ox::kernels::simd128::kquant::rows2_q2_k>(nb, w, w_stride, pairs, y, act, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_q3_k_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t pairs, const ox::BlockQ8_K* y,
                                                                const v128_t* act, const v128_t*, float* out) {
  pairs_body<ox::BlockQ3_K, ox::kernels::simd128::kquant::rows2_q3_k>(nb, w, w_stride, pairs, y, act, out);
}

// The SIMD128 body of an interleaved Q2_K / Q3_K slot: the rows back in natural order, then rows2.
template <typename Block, void (*from_il)(void*, int64_t), auto rows2>
void il_pairs_body(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const ox::BlockQ8_K* y, float* out) {
  using namespace ox::kernels::simd128;
  if (nb <= 0 || pairs <= 0) return;
  thread_local std::vector<Block> row0, row1;
  const v128_t* act = gemm::split_acts_q8_k(static_cast<int64_t>(nb) * ox::kQK_K, reinterpret_cast<const uint8_t*>(y));
  for (int32_t r = 0; r < pairs; ++r) {
    const Block* x0 = natural_row<Block, from_il>(w, w_stride, r, nb, row0);
    const Block* x1 = natural_row<Block, from_il>(w, w_stride, r + pairs, nb, row1);
    rows2(nb, x0, x1, y, act, kquant::opaque_consts(), fp16_consts(), out + r, out + r + pairs);
  }
}

extern "C" __attribute__((noinline)) void ox_simd128_q2_k_il_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                   int32_t pairs, const ox::BlockQ8_K* y,
                                                                   const ox::BlockQ8_K*, const v128_t*, float* out) {
  il_pairs_body<ox::BlockQ2_K, ox::quant::q2_k_from_il, ox::kernels::simd128::kquant::rows2_q2_k>(nb, w, w_stride, pairs,
                                                                                                y, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_q3_k_il_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                   int32_t pairs, const ox::BlockQ8_K* y,
                                                                   const ox::BlockQ8_K*, const v128_t*, float* out) {
  il_pairs_body<ox::BlockQ3_K, ox::quant::q3_k_from_il, ox::kernels::simd128::kquant::rows2_q3_k>(nb, w, w_stride, pairs,
                                                                                                y, out);
}

// A value no other function returns: an optimizer that merges functions with equal bodies must not
// merge this one, or the splice would change both.
extern "C" __attribute__((noinline)) int32_t ox_simd128_relaxed_active() { return 0x5128D00D; }
// As above, a value of its own; no probe expects it (u8_dot_exact).
extern "C" __attribute__((noinline)) int32_t ox_simd128_u8_dot_probe(int32_t, int32_t, int32_t) { return 0x5128D08E; }

namespace ox::kernels::simd128 {

// Not const: a pointer the optimizers cannot see through, so the slot stays a function of its own.
PairsFn q4_k_pairs = ox_simd128_q4_k_pairs;
PairsFn q5_k_pairs = ox_simd128_q5_k_pairs;
PairsFn q6_k_pairs = ox_simd128_q6_k_pairs;
PairsIlFn q4_k_il_pairs = ox_simd128_q4_k_il_pairs;
PairsIlFn q6_k_il_pairs = ox_simd128_q6_k_il_pairs;
PairsFn iq4_xs_pairs = ox_simd128_iq4_xs_pairs;
RelaxedActiveFn relaxed_active_slot = ox_simd128_relaxed_active;
U8DotProbeFn u8_dot_probe = ox_simd128_u8_dot_probe;
PairsFn q2_k_pairs = ox_simd128_q2_k_pairs;
PairsFn q3_k_pairs = ox_simd128_q3_k_pairs;
PairsIlFn q2_k_il_pairs = ox_simd128_q2_k_il_pairs;
PairsIlFn q3_k_il_pairs = ox_simd128_q3_k_il_pairs;

bool u8_dot_exact() {
  // Second operands at both ends of 128..255 and a pair sum past i16 (2 * 255 * 127), against
  // both signs of the first and a nonzero addend: a saturating or signed lowering fails each.
  static const bool exact = relaxed_active() && u8_dot_probe(255, 127, 0) == 4 * 255 * 127 &&
                            u8_dot_probe(255, -128, 0) == 4 * 255 * -128 && u8_dot_probe(128, 127, 5) == 4 * 128 * 127 + 5 &&
                            u8_dot_probe(241, -77, -3) == 4 * 241 * -77 - 3;
  return exact;
}

v128_t relaxed_constants[32] = {
    // offset 0: the nibble mask; 16, 32: unpack_k4_scales2's 0x3F and 0x30
    wasm_i8x16_const(0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F),
    wasm_i8x16_const(0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F),
    wasm_i8x16_const(0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30),
    // 48..112: fp16x4_to_f32's constants (util.h): rebias, subnormal bump, exponent masks, subnormal base
    wasm_i32x4_const(kFp16Rebias, kFp16Rebias, kFp16Rebias, kFp16Rebias),
    wasm_i32x4_const(kFp16SubnormalBump, kFp16SubnormalBump, kFp16SubnormalBump, kFp16SubnormalBump),
    wasm_i32x4_const(0x7C00, 0x7C00, 0x7C00, 0x7C00),
    wasm_i32x4_const(0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000),
    wasm_i32x4_const(kFp16SubnormalBase, kFp16SubnormalBase, kFp16SubnormalBase, kFp16SubnormalBase),
    // 128 + 16j: swizzle indices that copy i16 lane j (bytes 2j, 2j + 1) into every lane
    wasm_i8x16_const(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1),
    wasm_i8x16_const(2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3),
    wasm_i8x16_const(4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5),
    wasm_i8x16_const(6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7),
    wasm_i8x16_const(8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9),
    wasm_i8x16_const(10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11),
    wasm_i8x16_const(12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13),
    wasm_i8x16_const(14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15),
    // 256, 272: Fp16Fast's constants (util.h): the half's bits in f32 position, 2^112
    wasm_i32x4_const(static_cast<int32_t>(kFp16SignExpMantissa), static_cast<int32_t>(kFp16SignExpMantissa),
                     static_cast<int32_t>(kFp16SignExpMantissa), static_cast<int32_t>(kFp16SignExpMantissa)),
    wasm_f32x4_const(kFp16Scale, kFp16Scale, kFp16Scale, kFp16Scale),
    // 288: Q5_K's fifth bit in place (q5_k_pairs.wat)
    wasm_i8x16_const(0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10),
    // 304, 320: an activation's low seven bits and its sign bit moved to bit 0 (q8_0_quads.wat)
    wasm_i8x16_const(0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F),
    wasm_i8x16_const(0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01),
    // 336, 352, 368: Q5_0's and Q5_1's fifth bits (q5_0_quads.wat): the qh byte of each of elements
    // 0..15, of elements 16..31, and each element's bit within its byte
    wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
    wasm_i8x16_const(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3),
    wasm_u8x16_const(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128),
    // 384, 400: a Q2_K weight plane's mask in place (bits 0-1 or 2-3; the quant then counts 4x)
    // (q2_k_pairs.wat / q3_k_pairs.wat, gen_q2_q3_pairs.py; they share 0, 32, 48..240 and 288 too)
    wasm_i8x16_const(0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03),
    wasm_i8x16_const(0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C),
    // 416: Q2_K's scale byte k shifted left 2 kept where k % 4 < 2 (planes 0 and 2, which count 1x)
    wasm_i8x16_const(0x3C, 0x3C, 0, 0, 0x3C, 0x3C, 0, 0, 0x3C, 0x3C, 0, 0, 0x3C, 0x3C, 0, 0),
    // 432: Q2_K's scale byte k kept where k % 4 >= 2 (planes 1 and 3, which count 4x)
    wasm_i8x16_const(0, 0, 0x0F, 0x0F, 0, 0, 0x0F, 0x0F, 0, 0, 0x0F, 0x0F, 0, 0, 0x0F, 0x0F),
    // 448: Q3_K's high bit in place for planes 0 and 2 (bit 2; planes 1 and 3 take bit 4, 0x10 at 288)
    wasm_i8x16_const(0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    // 464: Q3_K's i16 scales times 4 in the lanes 2j + t of even planes j
    wasm_i16x8_const(4, 4, 1, 1, 4, 4, 1, 1),
    // 480: 2^(6 - 2g) for the i16 lanes of byte group g: bits 2g, 2g + 1 of Q3_K's packed high scale
    // bits to bits 6-7 (then masked in place by 0x30 at 32)
    wasm_i16x8_const(64, 64, 16, 16, 4, 4, 1, 1),
    // 496: Q3_K's scale offset 32
    wasm_i8x16_const(0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20),
};


}  // namespace ox::kernels::simd128
