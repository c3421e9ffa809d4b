// SIMD128 gemm tiles of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4).
// Prefill (n_tokens >= kPackMinTokens): weights and activations packed as i16 groups and run
// through the shared register tile (gemm_tile.h). Decode: activations split once per call, rows
// four at a time with the lane-form weights of block32_impl.h (Q4_0's, Q5_0's, Q5_1's, Q8_0's and
// IQ4_NL's through relaxed-SIMD slots). In the relaxed-SIMD module Q4_0's prefill runs on bytes instead
// (gemm_i7.h). Reference: quant_traits(W).vec_dot_ref.
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/simd128/block32_impl.h"
#include "kernels/simd128/gemm_i7.h"
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
namespace {

using gemm::Unit16;

// Each format: its block, extra count (1: the m * s term of Q4_1 / Q5_1), a block's 32 int8
// values in element order (prefill packing), its scale / extra (m), its halves for the decode
// path and the offset those halves carry (decode takes kDecodeOffset * sum(a) off per block);
// with kFifthBitTable the halves are the low four bits and decode adds the fifth by table.
struct Q4_0 {
  using Block = BlockQ4_0;
  static constexpr bool kFifthBitTable = false;
  static constexpr int kDecodeOffset = 8;
  static constexpr int kExtra = 0;
  static Unit16 unit(const Block& b) {
    const v128_t q = load(b.qs), m4 = wasm_i8x16_splat(0x0F), eight = wasm_i8x16_splat(8);
    return gemm::widen(wasm_i8x16_sub(wasm_v128_and(q, m4), eight), wasm_i8x16_sub(wasm_u8x16_shr(q, 4), eight));
  }
  static float scale(const Block& b, int) { return fp16(b.d); }
  static block32::Halves halves(const Block& b, const block32::Consts& c) { return block32::weights_q4_0_plus8(b, c); }
};

struct Q4_1 {
  using Block = BlockQ4_1;
  static constexpr bool kFifthBitTable = false;
  static constexpr int kDecodeOffset = 0;
  static constexpr int kExtra = 1;  // m * s
  static Unit16 unit(const Block& b) {
    const v128_t q = load(b.qs);
    return gemm::widen(wasm_v128_and(q, wasm_i8x16_splat(0x0F)), wasm_u8x16_shr(q, 4));
  }
  static float scale(const Block& b, int e) { return fp16(e == 0 ? b.d : b.m); }
  static block32::Halves halves(const Block& b, const block32::Consts& c) {
    return block32::weights_q4_1(b, c);
  }
};

// Q5 values 0..31 (nibble plus 16 where the qh bit is set) less `offset`.
template <typename Block>
inline Unit16 q5_unit(const Block& b, int offset) {
  const block32::Q5Bytes v = block32::q5_bytes(b.qs, b.qh, block32::inline_consts());
  const v128_t off = wasm_i8x16_splat(static_cast<int8_t>(offset));
  return gemm::widen(wasm_i8x16_sub(v.lo, off), wasm_i8x16_sub(v.hi, off));
}

struct Q5_0 {
  using Block = BlockQ5_0;
  static constexpr bool kFifthBitTable = true;  // halves: the nibbles only
  static constexpr int kDecodeOffset = 16;
  static constexpr int kExtra = 0;
  static Unit16 unit(const Block& b) { return q5_unit(b, 16); }
  static float scale(const Block& b, int) { return fp16(b.d); }
  static block32::Halves halves(const Block& b, const block32::Consts& c) { return block32::nibbles(b.qs, c); }
};

struct Q5_1 {
  using Block = BlockQ5_1;
  static constexpr bool kFifthBitTable = true;
  static constexpr int kDecodeOffset = 0;
  static constexpr int kExtra = 1;
  static Unit16 unit(const Block& b) { return q5_unit(b, 0); }
  static float scale(const Block& b, int e) { return fp16(e == 0 ? b.d : b.m); }
  static block32::Halves halves(const Block& b, const block32::Consts& c) { return block32::nibbles(b.qs, c); }
};

struct Q8_0 {
  using Block = BlockQ8_0;
  static constexpr bool kFifthBitTable = false;
  static constexpr int kDecodeOffset = 0;
  static constexpr int kExtra = 0;
  static Unit16 unit(const Block& b) { return gemm::widen(load(b.qs), load(b.qs + 16)); }
  static float scale(const Block& b, int) { return fp16(b.d); }
  static block32::Halves halves(const Block& b, const block32::Consts& c) {
    return block32::weights_q8_0(b, c);
  }
};

// The 16-entry codebook formats, IQ4_NL (fp16 d) and MXFP4 (E2M1 codes doubled to integers,
// -12..12, and an E8M0 exponent byte for a scale; decode reads four rows' scales through
// row_scales4): values by a swizzle of the codebook `kValues`, `kConst` its copy in Consts.
template <typename B, const int8_t (&kValues)[16], v128_t block32::Consts::*kConst>
struct Codebook {
  using Block = B;
  static constexpr bool kFifthBitTable = false;
  static constexpr int kDecodeOffset = 0;
  static constexpr int kExtra = 0;
  static Unit16 unit(const Block& b) {
    const v128_t table = load(kValues), q = load(b.qs);
    return gemm::widen(wasm_i8x16_swizzle(table, wasm_v128_and(q, wasm_i8x16_splat(0x0F))),
                       wasm_i8x16_swizzle(table, wasm_u8x16_shr(q, 4)));
  }
  static float scale(const Block& b, int) {
    if constexpr (std::is_same_v<Block, BlockMXFP4>) {
      return mxfp4_scale(b.e);
    } else {
      return fp16(b.d);
    }
  }
  static block32::Halves halves(const Block& b, const block32::Consts& c) {
    return block32::codebook_weights(b.qs, c.*kConst, c);
  }
};
using IQ4_NL = Codebook<BlockIQ4_NL, kIQ4NLValues, &block32::Consts::iq4_nl_values>;
using MXFP4 = Codebook<BlockMXFP4, kMXFP4Values, &block32::Consts::mxfp4_values>;

// Block i's scales of four rows as f32x4: fp16 d for all formats but MXFP4, whose exponent bytes
// take block32::mxfp4_scales4 (exact, as mxfp4_scale).
template <typename Block>
inline v128_t row_scales4(const Block* const x[4], int64_t i, const Fp16Consts& fc, const Fp16Fast& fast) {
  if constexpr (std::is_same_v<Block, BlockMXFP4>) {
    return block32::mxfp4_scales4(x[0][i], x[1][i], x[2][i], x[3][i]);
  } else {
    return fp16x4_scales_to_f32(gather_halves4(&x[0][i].d, &x[1][i].d, &x[2][i].d, &x[3][i].d), fc, fast);
  }
}

// Q5 decode, the fifth bits by table. Spreading a block's 32 qh bits over vector lanes took
// about a third of the vector instructions of a row's block. Instead, once per call, each activation block gets four 256-entry
// tables, one per qh byte: entry v = the sum of the block's activations 8p..8p+7 whose bit is
// set in v. A row's block then adds 16 * (four scalar lookups) to its nibble dot; the scalar
// loads run beside the vector work. Exact: integer sums (|entry| <= 8 * 127).
// Layout: sums[(b * 4 + p) * 256 + v], 2 KB per block.
const int16_t* fifth_bit_sums(int64_t nb, const uint8_t* a, int block_bytes, int qs_offset) {
  int16_t* sums = reinterpret_cast<int16_t*>(gemm::scratch(gemm::Slot::kTables, nb * 4 * 256 / 8));
  for (int64_t b = 0; b < nb; ++b) {
    const int8_t* q = reinterpret_cast<const int8_t*>(a + b * block_bytes + qs_offset);
    for (int p = 0; p < 4; ++p) {
      int16_t* t = sums + (b * 4 + p) * 256;
      t[0] = 0;
      for (int k = 0; k < 8; ++k) {  // entries with highest bit k: those below it plus q[8p + k]
        const int step = 1 << k;
        const int16_t add = q[8 * p + k];
        for (int v = 0; v < step; ++v) t[step + v] = static_cast<int16_t>(t[v] + add);
      }
    }
  }
  return sums;
}

// The tables for F's activation blocks (Q8_1 for Q5_1, Q8_0 for Q5_0).
template <typename F>
const int16_t* fifth_bit_sums_of(int64_t nb, const uint8_t* a) {
  return F::kExtra == 1 ? fifth_bit_sums(nb, a, sizeof(BlockQ8_1), offsetof(BlockQ8_1, qs))
                        : fifth_bit_sums(nb, a, sizeof(BlockQ8_0), offsetof(BlockQ8_0, qs));
}

// Decode: four rows at a time, lane j of the accumulator = row j of the four. Per block the
// four rows' i32x4 partial sums fold into one vector (hsum4x4_i32) and one f32x4 multiply
// applies their scales, so there is no horizontal sum per row and no scalar tail. The block
// loop stays rolled: unrolled, LLVM hoists every load of the body to its top and V8 then
// spills most of them. Group g holds rows g * g_step + j * j_step (j < 4; rows past n_rows
// repeat the last row and are not stored).
template <typename F>
void decode_groups(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, int64_t groups, int64_t g_step,
                   int64_t j_step, const gemm::SplitActs& act, const int16_t* fifth_sums, float* y) {
  using Block = typename F::Block;
  const block32::PreSplit a{act.q};
  for (int64_t g = 0; g < groups; ++g) {
    int64_t rows[4];
    const Block* x[4];
    for (int j = 0; j < 4; ++j) {
      rows[j] = g * g_step + j * j_step;
      const int64_t r = rows[j] < n_rows ? rows[j] : n_rows - 1;  // a repeat, not stored
      x[j] = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r) * w_stride);
    }
    v128_t acc = wasm_f32x4_splat(0.0f);
    const Fp16Consts fc = fp16_consts();
    const Fp16Fast fast = fp16_fast_consts();
    const block32::Consts c = block32::opaque_consts();
#pragma clang loop unroll(disable)
    for (int64_t i = 0; i < nb; ++i) {
      const block32::Halves ai = a(i);
      v128_t tot =
          hsum4x4_i32(block32::block_dot(F::halves(x[0][i], c), ai), block32::block_dot(F::halves(x[1][i], c), ai),
                      block32::block_dot(F::halves(x[2][i], c), ai), block32::block_dot(F::halves(x[3][i], c), ai));
      if constexpr (F::kDecodeOffset != 0) tot = wasm_i32x4_sub(tot, wasm_i32x4_splat(F::kDecodeOffset * act.sum[i]));
      if constexpr (F::kFifthBitTable) {
        const int16_t* t = fifth_sums + i * 1024;
        auto fifth = [&](int j) {
          const uint8_t* qh = x[j][i].qh;
          return t[qh[0]] + t[256 + qh[1]] + t[512 + qh[2]] + t[768 + qh[3]];
        };
        tot = wasm_i32x4_add(tot, wasm_i32x4_shl(wasm_i32x4_make(fifth(0), fifth(1), fifth(2), fifth(3)), 4));
      }
      const v128_t dx = row_scales4(x, i, fc, fast);
      acc = wasm_f32x4_add(
          acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(tot), wasm_f32x4_mul(dx, wasm_f32x4_splat(act.d[i]))));
      if constexpr (F::kExtra == 1) {
        const v128_t m = fp16x4_scales_to_f32(gather_halves4(&x[0][i].m, &x[1][i].m, &x[2][i].m, &x[3][i].m), fc, fast);
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(m, wasm_f32x4_splat(act.s[i])));
      }
    }
    if (j_step == 1 && rows[3] < n_rows) {
      wasm_v128_store(y + rows[0], acc);
    } else {
      float lanes[4];
      wasm_v128_store(lanes, acc);
      for (int j = 0; j < 4; ++j) {
        if (rows[j] < n_rows) y[rows[j]] = lanes[j];
      }
    }
  }
}

// The groups of decode_groups for n_rows rows: rows of up to 512 bytes go four adjacent rows at
// a time; longer rows are taken a quarter of the rows apart (0, q, 2q, 3q; then 1, q + 1, ...),
// which streams measurably faster from memory (1.2-1.5x over adjacent rows for 1-5 KB rows).
struct Groups {
  int64_t groups, g_step, j_step;
};
inline Groups row_groups(int64_t n_rows, uint64_t w_stride) {
  const int64_t groups = (n_rows + 3) / 4;
  return w_stride <= 512 ? Groups{groups, 4, 1} : Groups{groups, 1, groups};
}

template <typename F>
void decode_rows(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 const gemm::SplitActs& act, const int16_t* fifth_sums, float* y) {
  const Groups g = row_groups(n_rows, w_stride);
  decode_groups<F>(nb, w, w_stride, n_rows, g.groups, g.g_step, g.j_step, act, fifth_sums, y);
}

// Decode through a relaxed-SIMD slot (relaxed_slots.h) for every whole group of four rows; a group
// the slot leaves undone (an Inf or NaN scale) and the rows left over run decode_groups. The slot's
// group g is rows g * g_step + j * j_step: after group s, the slot goes on with the matrix and the
// output moved s + 1 groups' first rows on. slot(w, groups, out) calls it with the rest fixed.
// fifth_sums is read after each slot call (a Q5_0 slot's caller builds the tables then).
template <typename F, typename Slot>
void decode_slot_groups(Slot slot, int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                        const gemm::SplitActs& act, const int16_t* const& fifth_sums, float* y) {
  const int64_t whole = n_rows / 4 * 4;
  if (whole > 0) {
    const Groups g = row_groups(whole, w_stride);
    for (int64_t g0 = 0; g0 < g.groups;) {
      const uint64_t first = static_cast<uint64_t>(g0 * g.g_step);
      g0 += slot(w + first * w_stride, g, static_cast<int32_t>(g.groups - g0), y + first);
      if (g0 >= g.groups) break;
      const uint64_t left = static_cast<uint64_t>(g0 * g.g_step);
      decode_groups<F>(nb, w + left * w_stride, w_stride, 3 * g.j_step + 1, 1, 0, g.j_step, act, fifth_sums, y + left);
      ++g0;
    }
  }
  if (whole < n_rows) {
    decode_groups<F>(nb, w + static_cast<uint64_t>(whole) * w_stride, w_stride, n_rows - whole, 1, 1, 1, act,
                     fifth_sums, y + whole);
  }
}

constexpr const int16_t* kNoTables = nullptr;

// Q4_0 and Q8_0 through their QuadsFn slots.
template <typename F>
void decode_quads(QuadsFn slot, int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                  const gemm::SplitActs& act, float* y) {
  decode_slot_groups<F>(
      [&](const uint8_t* wg, const Groups& g, int32_t groups, float* out) {
        return slot(static_cast<int32_t>(nb), wg, static_cast<uint32_t>(w_stride), groups,
                    static_cast<int32_t>(g.g_step), static_cast<int32_t>(g.j_step),
                    reinterpret_cast<const BlockQ8_0*>(a), act.q, act.d, act.sum, relaxed_constants, out);
      },
      nb, w, w_stride, n_rows, act, kNoTables, y);
}

// Q4_0 and IQ4_NL through their U8QuadsFn slots, where u8_dot_exact() holds.
template <typename F>
void decode_u8_quads(U8QuadsFn slot, int offset, int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                     const uint8_t* a, const gemm::SplitActs& act, float* y) {
  const v128_t* records = n_rows >= 4 ? u8_records(nb, a, act.d, act.sum, offset) : nullptr;
  decode_slot_groups<F>(
      [&](const uint8_t* wg, const Groups& g, int32_t groups, float* out) {
        return slot(static_cast<int32_t>(nb), wg, static_cast<uint32_t>(w_stride), groups,
                    static_cast<int32_t>(g.g_step), static_cast<int32_t>(g.j_step), records, act.q, act.d, act.sum,
                    relaxed_constants, out);
      },
      nb, w, w_stride, n_rows, act, kNoTables, y);
}

}  // namespace

const v128_t* u8_records(int64_t nb, const uint8_t* a, const float* d, const int32_t* sum, int offset) {
  v128_t* out = gemm::scratch(gemm::Slot::kTables, nb * 3);
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ8_0& blk = reinterpret_cast<const BlockQ8_0*>(a)[b];
    out[3 * b] = load(blk.qs);
    out[3 * b + 1] = load(blk.qs + 16);
    const float db = d[b];
    int32_t bits;
    std::memcpy(&bits, &db, sizeof(bits));
    out[3 * b + 2] = wasm_i32x4_make(-offset * sum[b], bits, 0, 0);
  }
  return out;
}

namespace {

template <>
void decode_rows<Q4_0>(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       const gemm::SplitActs& act, const int16_t*, float* y) {
  if (u8_dot_exact()) return decode_u8_quads<Q4_0>(q4_0_u8_quads, 8, nb, w, w_stride, n_rows, a, act, y);
  decode_quads<Q4_0>(q4_0_quads, nb, w, w_stride, n_rows, a, act, y);
}
template <>
void decode_rows<Q8_0>(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       const gemm::SplitActs& act, const int16_t*, float* y) {
  decode_quads<Q8_0>(q8_0_quads, nb, w, w_stride, n_rows, a, act, y);
}

// A token's Q8_0 quants split by sign for the relaxed iq4_nl_quads body (relaxed_slots.h): per
// block |q| of elements 0..15 and 16..31, their sign masks, and the sum of its negative quants.
// Null signs where a quant is -128, whose magnitude is no i7 operand (quantize_row_q8_0 rounds
// to -127..127, so only other writers' blocks can hold one).
struct SignedActs {
  const v128_t* signs;
  const int32_t* neg_sum;
};
SignedActs split_signs(int64_t nb, const uint8_t* a) {
  v128_t* signs = gemm::scratch(gemm::Slot::kTables, nb * 4 + (nb + 3) / 4);
  int32_t* neg_sum = reinterpret_cast<int32_t*>(signs + nb * 4);
  const v128_t zero = wasm_i8x16_splat(0), min = wasm_i8x16_splat(-128);
  v128_t any_min = zero;
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ8_0& blk = reinterpret_cast<const BlockQ8_0*>(a)[b];
    const v128_t lo = load(blk.qs), hi = load(blk.qs + 16);
    const v128_t slo = wasm_i8x16_lt(lo, zero), shi = wasm_i8x16_lt(hi, zero);
    any_min = wasm_v128_or(any_min, wasm_v128_or(wasm_i8x16_eq(lo, min), wasm_i8x16_eq(hi, min)));
    signs[4 * b] = wasm_i8x16_abs(lo);
    signs[4 * b + 1] = wasm_i8x16_abs(hi);
    signs[4 * b + 2] = slo;
    signs[4 * b + 3] = shi;
    const v128_t neg = wasm_i16x8_add(wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_and(lo, slo)),
                                      wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_and(hi, shi)));
    neg_sum[b] = hsum_i32(wasm_i32x4_extadd_pairwise_i16x8(neg));
  }
  if (wasm_v128_any_true(any_min)) return {nullptr, nullptr};
  return {signs, neg_sum};
}

// IQ4_NL: where the relaxed dot multiplies unsigned bytes exactly (u8_dot_exact), whole groups of
// four through iq4_nl_u8_quads; else through iq4_nl_quads where the relaxed body runs and the
// activations split by sign; every other row by decode_groups (the same bits).
template <>
void decode_rows<IQ4_NL>(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                         const gemm::SplitActs& act, const int16_t*, float* y) {
  if (u8_dot_exact()) return decode_u8_quads<IQ4_NL>(iq4_nl_u8_quads, 128, nb, w, w_stride, n_rows, a, act, y);
  int64_t done = 0;
  if (relaxed_active() && n_rows >= 4) {
    const SignedActs s = split_signs(nb, a);
    if (s.signs != nullptr) {
      done = n_rows / 4 * 4;
      const Groups g = row_groups(done, w_stride);
      iq4_nl_quads(static_cast<int32_t>(nb), w, static_cast<uint32_t>(w_stride), static_cast<int32_t>(g.groups),
                   static_cast<int32_t>(g.g_step), static_cast<int32_t>(g.j_step), s.signs, act.q, act.d, s.neg_sum,
                   relaxed_constants, y);
    }
  }
  if (done < n_rows) {
    const Groups g = row_groups(n_rows - done, w_stride);
    decode_groups<IQ4_NL>(nb, w + static_cast<uint64_t>(done) * w_stride, w_stride, n_rows - done, g.groups, g.g_step,
                          g.j_step, act, nullptr, y + done);
  }
}
// Q5_0 and Q5_1 the same through their slots (the SIMD128 bodies and Q5_1's relaxed one read the
// fifth-bit tables; Q5_0's relaxed body builds each value whole, so without them a group it leaves
// undone gets them built here).
template <typename F>
void decode_q5_quads(Q5QuadsFn slot, int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                     const uint8_t* a, const gemm::SplitActs& act, const int16_t* fifth_sums, float* y) {
  const int16_t* fifth = fifth_sums;
  decode_slot_groups<F>(
      [&](const uint8_t* wg, const Groups& g, int32_t groups, float* out) {
        const int32_t done = slot(static_cast<int32_t>(nb), wg, static_cast<uint32_t>(w_stride), groups,
                                  static_cast<int32_t>(g.g_step), static_cast<int32_t>(g.j_step), a, act.q, act.d,
                                  act.s, act.sum, fifth_sums, relaxed_constants, out);
        if (done < groups && fifth == nullptr) fifth = fifth_bit_sums_of<F>(nb, a);
        return done;
      },
      nb, w, w_stride, n_rows, act, fifth, y);
}
template <>
void decode_rows<Q5_0>(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       const gemm::SplitActs& act, const int16_t* fifth_sums, float* y) {
  decode_q5_quads<Q5_0>(q5_0_quads, nb, w, w_stride, n_rows, a, act, fifth_sums, y);
}
template <>
void decode_rows<Q5_1>(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       const gemm::SplitActs& act, const int16_t* fifth_sums, float* y) {
  decode_q5_quads<Q5_1>(q5_1_quads, nb, w, w_stride, n_rows, a, act, fifth_sums, y);
}

// Prefill on byte groups (gemm_i7.h; nb a multiple of 4): the same bits as the i16 groups below,
// with the relaxed module's 16-products-per-instruction tile.
// Every token comes in one call (KernelTable::gemm_all_tokens), in passes (gemm::kPassActBytes).
// Split into matmul's 256 KB chunks instead, a 1B model's 128-token prefill unpacked every
// 2048-wide matrix twice (120 + 8 tokens) and the 8192-wide ones five times (30-token chunks, each
// with a 2-token edge in SIMD128): ~9% of its time in the relaxed module (node profile).
// IQ4_NL (only where u8_dot_exact: the tile's weight operand is then any byte) packs each nibble's
// codebook value + 128 (1..241), and 128 * sum(a) comes off; Q4_0 its nibbles, 8 * sum(a) off.
// u8: whole tiles through u8_tile rather than i7_tile (the same bits).
template <typename F>
void prefill_i7(int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride, bool u8) {
  using Block = typename F::Block;
  constexpr bool kCodebook = std::is_same_v<F, IQ4_NL>;
  const int64_t n_groups = nb / 4, row = n_groups * gemm::kI7WeightStride, a_row = n_groups * gemm::kI7ActStride;
  const int64_t pass = gemm::pass_tokens(a_row);
  const v128_t* pa = gemm::pack_acts_q8_0_i7(nb * 32, a, a_stride, n_tokens, kCodebook ? 128 : F::kDecodeOffset);
  const v128_t shifted_values = gemm::iq4_nl_values_u8();
  auto values = [&](v128_t v) { return kCodebook ? wasm_i8x16_swizzle(shifted_values, v) : v; };
  v128_t* pw = gemm::scratch(gemm::Slot::kWeights, row * gemm::kPackRows);
  const Fp16Consts fc = fp16_consts();
  for (int64_t r0 = 0; r0 < n_rows; r0 += gemm::kPackRows) {
    const int64_t nr = n_rows - r0 < gemm::kPackRows ? n_rows - r0 : gemm::kPackRows;
    for (int64_t r = 0; r < nr; ++r) {
      const Block* x = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r0 + r) * w_stride);
      // The stored nibbles (0..15), the i7 operand; kDecodeOffset * sum(a) comes off in the tile.
      // The four scales in one vector conversion, fp16()'s steps.
      gemm::pack_i7_nibble_row(gemm::packed_row(pw, row, r, nr, gemm::kTileRows), n_groups,
                               [&](int64_t u) { return load(x[u].qs); },
                               [&](int64_t u) { return fp16x4_to_f32(gather_halves4(&x[u].d, &x[u + 1].d, &x[u + 2].d, &x[u + 3].d), fc); },
                               values);
    }
    // Token blocks of packed_row start at t0 * a_row (t0 a multiple of the tile's tokens).
    for (int64_t t0 = 0; t0 < n_tokens; t0 += pass) {
      const int64_t nt = std::min(pass, n_tokens - t0);
      (u8 ? gemm::u8_product : gemm::i7_product)(pw, nr, pa + t0 * a_row, nt, n_groups, y + t0 * y_stride + r0,
                                                 y_stride);
    }
  }
}

template <typename F>
void gemm_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                  uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  using Block = typename F::Block;
  const int64_t nb = n / 32;
  if (n_tokens < gemm::kPackMinTokens) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint8_t* at = a + static_cast<uint64_t>(t) * a_stride;
      const gemm::SplitActs act = gemm::split_acts_block32(n, at, F::kExtra == 1);
      const int16_t* fifth_sums = nullptr;
      // Q5_0's relaxed slot builds each value whole instead of reading the tables, so there only
      // rows past the last whole group of four need them.
      if constexpr (F::kFifthBitTable) {
        if (F::kExtra == 1 || !relaxed_active() || n_rows % 4 != 0) {
          fifth_sums = fifth_bit_sums_of<F>(nb, at);
        }
      }
      decode_rows<F>(nb, w, w_stride, n_rows, at, act, fifth_sums, y + t * y_stride);
    }
    return;
  }
  if constexpr (std::is_same_v<F, Q4_0>) {
    // Only where the relaxed tile runs: in SIMD128 the i16 groups are faster than widening bytes.
    if (relaxed_active() && nb % 4 == 0) {
      return prefill_i7<F>(nb, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, u8_dot_exact());
    }
  }
  if constexpr (std::is_same_v<F, IQ4_NL>) {
    // Signed codebook values are no i7 operand; + 128 they are one of u8_tile's bytes.
    if (u8_dot_exact() && nb % 4 == 0) return prefill_i7<F>(nb, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, true);
  }
  // The i16 groups: every token (gemm_all_tokens), each block of rows unpacked once, in passes.
  const v128_t* pa = F::kExtra == 0 ? gemm::pack_acts_q8_0(n, a, a_stride, n_tokens)
                                    : gemm::pack_acts_q8_1(n, a, a_stride, n_tokens);
  const int64_t row = gemm::packed_row_vecs(nb, F::kExtra);
  v128_t* pw = gemm::scratch(gemm::Slot::kWeights, row * gemm::kPackRows);
  const Fp16Consts fc = fp16_consts();
  for (int64_t r0 = 0; r0 < n_rows; r0 += gemm::kPackRows) {
    const int64_t nr = n_rows - r0 < gemm::kPackRows ? n_rows - r0 : gemm::kPackRows;
    for (int64_t r = 0; r < nr; ++r) {
      const Block* x = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r0 + r) * w_stride);
      const gemm::PackedRow pr = gemm::packed_row(pw, row, r, nr, gemm::kTileRows);
      auto unit = [&](int64_t u) { return F::unit(x[u]); };
      auto scale = [&](int64_t u, int e) { return F::scale(x[u], e); };
      if constexpr (std::is_same_v<Block, BlockMXFP4>) {
        gemm::pack_row<F::kExtra>(pr, nb, unit, scale);
      } else {
        // The fp16 d (and m) of four blocks in one vector conversion, fp16()'s steps.
        gemm::pack_row<F::kExtra>(pr, nb, unit, scale, [&](int64_t u, int e) {
          if constexpr (F::kExtra == 1) {
            if (e == 1) return fp16x4_to_f32(gather_halves4(&x[u].m, &x[u + 1].m, &x[u + 2].m, &x[u + 3].m), fc);
          }
          return fp16x4_to_f32(gather_halves4(&x[u].d, &x[u + 1].d, &x[u + 2].d, &x[u + 3].d), fc);
        });
      }
    }
    gemm::packed_product_passes<F::kExtra>(pw, nr, pa, n_tokens, nb, y + r0, y_stride);
  }
}

}  // namespace

// The SIMD128 bodies of the q4_0_quads, q8_0_quads and iq4_nl_quads slots (relaxed_slots.h); the
// splice finds them by their plain names.
template <typename F>
void quads_body(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step, int32_t j_step,
                const v128_t* act_q, const float* d, const int32_t* sum, float* out) {
  const gemm::SplitActs act{act_q, d, nullptr, sum};
  const int64_t n_rows = static_cast<int64_t>(groups) * 4;
  decode_groups<F>(nb, w, w_stride, n_rows, groups, g_step, j_step, act, nullptr, out);
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_q4_0_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t groups, int32_t g_step, int32_t j_step,
                                                                const BlockQ8_0*, const v128_t* act_q, const float* d,
                                                                const int32_t* sum, const v128_t*, float* out) {
  quads_body<Q4_0>(nb, w, w_stride, groups, g_step, j_step, act_q, d, sum, out);
  return groups;
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_q8_0_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t groups, int32_t g_step, int32_t j_step,
                                                                const BlockQ8_0*, const v128_t* act_q, const float* d,
                                                                const int32_t* sum, const v128_t*, float* out) {
  quads_body<Q8_0>(nb, w, w_stride, groups, g_step, j_step, act_q, d, sum, out);
  return groups;
}
extern "C" __attribute__((noinline)) void ox_simd128_iq4_nl_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                  int32_t groups, int32_t g_step, int32_t j_step,
                                                                  const v128_t*, const v128_t* act_q, const float* d,
                                                                  const int32_t*, const v128_t*, float* out) {
  quads_body<IQ4_NL>(nb, w, w_stride, groups, g_step, j_step, act_q, d, nullptr, out);
}
// The u8 slots' SIMD128 bodies run each group on its own: the same steps as iq4_nl_quads's and
// q4_0_quads's, in code of their own, so that no linker pass merges two slots (the splice needs
// every name).
template <typename F>
void groups_one_by_one(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step, int32_t j_step,
                       const v128_t* act_q, const float* d, const int32_t* sum, float* out) {
  const gemm::SplitActs act{act_q, d, nullptr, sum};
  for (int32_t g = 0; g < groups; ++g) {
    const uint64_t r0 = static_cast<uint64_t>(g) * static_cast<uint64_t>(g_step);
    decode_groups<F>(nb, w + r0 * w_stride, w_stride, 3 * static_cast<int64_t>(j_step) + 1, 1, 0, j_step, act, nullptr,
                     out + r0);
  }
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_q4_0_u8_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                      int32_t groups, int32_t g_step, int32_t j_step,
                                                                      const v128_t*, const v128_t* act_q, const float* d,
                                                                      const int32_t* sum, const v128_t*, float* out) {
  groups_one_by_one<Q4_0>(nb, w, w_stride, groups, g_step, j_step, act_q, d, sum, out);
  return groups;
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_iq4_nl_u8_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                      int32_t groups, int32_t g_step, int32_t j_step,
                                                                      const v128_t*, const v128_t* act_q, const float* d,
                                                                      const int32_t* sum, const v128_t*, float* out) {
  groups_one_by_one<IQ4_NL>(nb, w, w_stride, groups, g_step, j_step, act_q, d, sum, out);
  return groups;
}
// The SIMD128 bodies of the q5_0_quads and q5_1_quads slots.
template <typename F>
void q5_quads_body(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t groups, int32_t g_step, int32_t j_step,
                   const v128_t* act_q, const float* d, const float* s, const int32_t* sum, const int16_t* fifth,
                   float* out) {
  const gemm::SplitActs act{act_q, d, s, sum};
  const int64_t n_rows = static_cast<int64_t>(groups) * 4;
  decode_groups<F>(nb, w, w_stride, n_rows, groups, g_step, j_step, act, fifth, out);
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_q5_0_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t groups, int32_t g_step, int32_t j_step,
                                                                const uint8_t*, const v128_t* act_q, const float* d,
                                                                const float* s, const int32_t* sum,
                                                                const int16_t* fifth, const v128_t*, float* out) {
  q5_quads_body<Q5_0>(nb, w, w_stride, groups, g_step, j_step, act_q, d, s, sum, fifth, out);
  return groups;
}
extern "C" __attribute__((noinline)) int32_t ox_simd128_q5_1_quads(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                int32_t groups, int32_t g_step, int32_t j_step,
                                                                const uint8_t*, const v128_t* act_q, const float* d,
                                                                const float* s, const int32_t* sum,
                                                                const int16_t* fifth, const v128_t*, float* out) {
  q5_quads_body<Q5_1>(nb, w, w_stride, groups, g_step, j_step, act_q, d, s, sum, fifth, out);
  return groups;
}
// Not const: pointers the optimizers cannot see through, so each slot stays a function of its own.
QuadsFn q4_0_quads = ox_simd128_q4_0_quads;
QuadsFn q8_0_quads = ox_simd128_q8_0_quads;
Iq4NlQuadsFn iq4_nl_quads = ox_simd128_iq4_nl_quads;
U8QuadsFn iq4_nl_u8_quads = ox_simd128_iq4_nl_u8_quads;
U8QuadsFn q4_0_u8_quads = ox_simd128_q4_0_u8_quads;
Q5QuadsFn q5_0_quads = ox_simd128_q5_0_quads;
Q5QuadsFn q5_1_quads = ox_simd128_q5_1_quads;

void register_gemm_block32(KernelTable& t) {
  // Every gemm here splits its tokens into passes itself (prefill_i7, packed_product_passes).
  auto tile = [&](DType type, GemmFn fn) {
    t.gemm[static_cast<uint32_t>(type)] = fn;
    t.gemm_all_tokens[static_cast<uint32_t>(type)] = true;
  };
  tile(DType::Q4_0, gemm_block32<Q4_0>);
  tile(DType::Q4_1, gemm_block32<Q4_1>);
  tile(DType::Q5_0, gemm_block32<Q5_0>);
  tile(DType::Q5_1, gemm_block32<Q5_1>);
  tile(DType::Q8_0, gemm_block32<Q8_0>);
  tile(DType::IQ4_NL, gemm_block32<IQ4_NL>);
  tile(DType::MXFP4, gemm_block32<MXFP4>);
}

}  // namespace ox::kernels::simd128
