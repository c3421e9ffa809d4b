// SIMD128 gemm tiles of the K-quants (Q2_K..Q6_K) and IQ4_XS against Q8_K. Prefill: each
// 32-element slice of a super-block becomes one unit of the packed layout (gemm_tile.h) with
// its integer sub-block scales multiplied into the i16 values (|scale * q| <= 4096, so every
// value fits i16 and a group's i32 lane stays below 2^25), the super-block's d as the unit
// scale and the min terms (-dmin * m against d * bsums) as extras. The two groups of a
// super-block share d, so the tile adds their integer dots (below 2^26) before one float step. Decode: the row dots of
// kquant_impl.h against activations split once per call. Reference: quant_traits(W).vec_dot_ref.
#include "kernels/simd128/gemm_superblock.h"
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/interleave.h"
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
namespace {

using gemm::scaled2;
using gemm::Unit16;

// Bytes 0..31 of a 32-byte run (two loads), each shifted right by `shift` and masked.
inline void bits32(const uint8_t* p, int shift, int mask, v128_t* lo, v128_t* hi) {
  const v128_t m = wasm_i8x16_splat(static_cast<int8_t>(mask));
  *lo = wasm_v128_and(wasm_u8x16_shr(load(p), shift), m);
  *hi = wasm_v128_and(wasm_u8x16_shr(load(p + 16), shift), m);
}

// Each format: prepare() decodes a super-block's scales once; unit(b, s, j) gives unit j
// (elements 32j..32j+31) scaled; extra(b, s, j, e) its e-th min term; row() the decode row dot
// against activations split once per call, and with kTwoRows, pairs() the dots of rows r and
// r + n_rows / 2 together (a relaxed-SIMD slot, relaxed_slots.h, over kquant::rows2_q4_k / _q5_k / _q6_k /
// _iq4_xs / _q2_k / _q3_k).
struct Q4K {
  using Block = BlockQ4_K;
  static constexpr int kExtra = 1;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kBsum32;
  static constexpr bool kTwoRows = true;
  struct Scales {
    KScales k;
    float dmin;
  };
  static Scales prepare(const Block& b) { return {unpack_k4_scales(b.scales), fp16(b.dmin)}; }
  // Element 64c + l in the low nibble of qs[32c + l], 64c + 32 + l in the high one.
  static gemm::UnitBytes unit_bytes(const Block& b, int j) {
    gemm::UnitBytes u;
    bits32(b.qs + 32 * (j / 2), 4 * (j % 2), 0x0F, &u.lo, &u.hi);
    return u;
  }
  static int unit_scale(const Scales& s, int j) { return s.k.scales[j]; }
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    const gemm::UnitBytes u = unit_bytes(b, j);
    return gemm::scaled(gemm::widen(u.lo, u.hi), unit_scale(s, j));
  }
  static float extra(const Block&, const Scales& s, int j, int) {
    return -s.dmin * static_cast<float>((s.k.mins >> (8 * j)) & 0xFF);
  }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts& c) {
    return kquant::row_q4_k(nb, x, y, act, c);
  }
  static constexpr const PairsFn& pairs = q4_k_pairs;
};

struct Q5K {
  using Block = BlockQ5_K;
  static constexpr int kExtra = 1;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kBsum32;
  static constexpr bool kTwoRows = true;
  using Scales = Q4K::Scales;
  static Scales prepare(const Block& b) { return {unpack_k4_scales(b.scales), fp16(b.dmin)}; }
  // As Q4_K, plus bit j of qh[l] = the 5th bit of element 32j + l.
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    v128_t lo, hi, hb_lo, hb_hi;
    bits32(b.qs + 32 * (j / 2), 4 * (j % 2), 0x0F, &lo, &hi);
    bits32(b.qh, j, 1, &hb_lo, &hb_hi);
    lo = wasm_v128_or(lo, wasm_i8x16_shl(hb_lo, 4));
    hi = wasm_v128_or(hi, wasm_i8x16_shl(hb_hi, 4));
    return gemm::scaled(gemm::widen(lo, hi), s.k.scales[j]);
  }
  static float extra(const Block&, const Scales& s, int j, int) {
    return -s.dmin * static_cast<float>((s.k.mins >> (8 * j)) & 0xFF);
  }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts&) {
    return kquant::row_q5_k(nb, x, y, act);
  }
  static constexpr const PairsFn& pairs = q5_k_pairs;
};

struct Q6K {
  using Block = BlockQ6_K;
  static constexpr int kExtra = 0;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kNone;
  static constexpr bool kTwoRows = true;
  struct Scales {};
  static Scales prepare(const Block&) { return {}; }
  // Unit j = elements 128h + 32k + l (h = j / 4, k = j % 4): low 4 bits in the low (k < 2) or
  // high nibble of ql[64h + 32(k & 1) + l], top 2 bits at bits 2k of qh[32h + l]; q - 32.
  static Unit16 unit(const Block& b, const Scales&, int j) {
    const int h = j / 4, k = j % 4;
    v128_t lo, hi, top_lo, top_hi;
    bits32(b.ql + 64 * h + 32 * (k & 1), k < 2 ? 0 : 4, 0x0F, &lo, &hi);
    bits32(b.qh + 32 * h, 2 * k, 3, &top_lo, &top_hi);
    const v128_t c32 = wasm_i8x16_splat(32);
    lo = wasm_i8x16_sub(wasm_v128_or(lo, wasm_i8x16_shl(top_lo, 4)), c32);
    hi = wasm_i8x16_sub(wasm_v128_or(hi, wasm_i8x16_shl(top_hi, 4)), c32);
    return scaled2(gemm::widen(lo, hi), b.scales[2 * j], b.scales[2 * j + 1]);
  }
  static float extra(const Block&, const Scales&, int, int) { return 0.0f; }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts& c) {
    return kquant::row_q6_k(nb, x, y, act, c);
  }
  static constexpr const PairsFn& pairs = q6_k_pairs;
};

// The interleaved layouts (core/quant/interleave.h): the scales of Q4_K / Q6_K, the units gathered
// back into natural order for the packed layout, and decode through the layouts' own row-pair slots
// against activations put in the layout's order once per call.
struct Q4KIL : Q4K {
  static constexpr DType kType = DType::Q4_K_IL;
  // Sub-block j sits in the even (j even) or odd 16-bit lanes of the four nibble vectors of run j / 2:
  // elements 0..7 in the low nibbles of bytes 0..15, 8..15 in their high nibbles, 16..31 likewise in
  // bytes 16..31.
  static gemm::UnitBytes unit_bytes(const Block& b, int j) {
    const uint8_t* run = b.qs + 32 * (j / 2);
    const v128_t m4 = wasm_i8x16_splat(0x0F), v0 = load(run), v1 = load(run + 16);
    const v128_t n0 = wasm_v128_and(v0, m4), n1 = wasm_u8x16_shr(v0, 4);
    const v128_t n2 = wasm_v128_and(v1, m4), n3 = wasm_u8x16_shr(v1, 4);
    v128_t lo, hi;
    if (j % 2 == 0) {
      lo = wasm_i8x16_shuffle(n0, n1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
      hi = wasm_i8x16_shuffle(n2, n3, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
    } else {
      lo = wasm_i8x16_shuffle(n0, n1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
      hi = wasm_i8x16_shuffle(n2, n3, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    }
    return {lo, hi};
  }
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    const gemm::UnitBytes u = unit_bytes(b, j);
    return gemm::scaled(gemm::widen(u.lo, u.hi), unit_scale(s, j));
  }
  static const BlockQ8_K* acts(int64_t n, const uint8_t* a) { return acts_q4_k_il(n, a); }
  static constexpr const PairsIlFn& il_pairs = q4_k_il_pairs;
};

// A 32-byte run of Q6_K_IL in natural order: bytes 0..15 and 16..31.
inline void natural_run(const uint8_t* p, v128_t* lo, v128_t* hi) {
  const v128_t r0 = load(p), r1 = load(p + 16);
  *lo = wasm_i8x16_shuffle(r0, r1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
  *hi = wasm_i8x16_shuffle(r0, r1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
}

struct Q6KIL : Q6K {
  static constexpr DType kType = DType::Q6_K_IL;
  // As Q6K::unit, from the runs put back in natural order.
  static Unit16 unit(const Block& b, const Scales&, int j) {
    const int h = j / 4, k = j % 4;
    v128_t lo, hi, top_lo, top_hi;
    natural_run(b.ql + 64 * h + 32 * (k & 1), &lo, &hi);
    natural_run(b.qh + 32 * h, &top_lo, &top_hi);
    const int shift = k < 2 ? 0 : 4;
    const v128_t m4 = wasm_i8x16_splat(0x0F), m3 = wasm_i8x16_splat(3), c32 = wasm_i8x16_splat(32);
    lo = wasm_v128_and(wasm_u8x16_shr(lo, shift), m4);
    hi = wasm_v128_and(wasm_u8x16_shr(hi, shift), m4);
    top_lo = wasm_v128_and(wasm_u8x16_shr(top_lo, 2 * k), m3);
    top_hi = wasm_v128_and(wasm_u8x16_shr(top_hi, 2 * k), m3);
    lo = wasm_i8x16_sub(wasm_v128_or(lo, wasm_i8x16_shl(top_lo, 4)), c32);
    hi = wasm_i8x16_sub(wasm_v128_or(hi, wasm_i8x16_shl(top_hi, 4)), c32);
    return scaled2(gemm::widen(lo, hi), b.scales[2 * j], b.scales[2 * j + 1]);
  }
  static const BlockQ8_K* acts(int64_t n, const uint8_t* a) { return acts_q6_k_il(n, a); }
  static constexpr const PairsIlFn& il_pairs = q6_k_il_pairs;
};

// Q2_K / Q3_K: unit j = elements 128h + 32s + l (h = j / 4, s = j % 4) at bits 2s..2s+1 of
// qs[32h + l]; its two 16-element sub-blocks are 2j and 2j + 1.
struct Q3K {
  using Block = BlockQ3_K;
  static constexpr int kExtra = 0;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kNone;
  static constexpr bool kTwoRows = true;
  struct Scales {
    int8_t sc[16];
  };
  static Scales prepare(const Block& b) {
    Scales s;
    wasm_v128_store(s.sc, q3_k_scales(b.scales));
    return s;
  }
  // q = low2 + 4 * (bit j of hmask[l]) - 4.
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    v128_t lo, hi, hb_lo, hb_hi;
    bits32(b.qs + 32 * (j / 4), 2 * (j % 4), 3, &lo, &hi);
    bits32(b.hmask, j, 1, &hb_lo, &hb_hi);
    return scaled_unit(b, s, wasm_v128_or(lo, wasm_i8x16_shl(hb_lo, 2)), wasm_v128_or(hi, wasm_i8x16_shl(hb_hi, 2)), j);
  }
  // Unit j from its sub-blocks' stored values u (0..7) as bytes.
  static Unit16 scaled_unit(const Block&, const Scales& s, v128_t u_lo, v128_t u_hi, int j) {
    const v128_t c4 = wasm_i8x16_splat(4);
    return scaled2(gemm::widen(wasm_i8x16_sub(u_lo, c4), wasm_i8x16_sub(u_hi, c4)), s.sc[2 * j], s.sc[2 * j + 1]);
  }
  static float extra(const Block&, const Scales&, int, int) { return 0.0f; }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts&) {
    return kquant::row_q3_k(nb, x, y, act);
  }
  static constexpr const PairsFn& pairs = q3_k_pairs;
};

struct Q2K {
  using Block = BlockQ2_K;
  static constexpr int kExtra = 2;  // one min per 16-element sub-block
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kBsum16;
  static constexpr bool kTwoRows = true;
  struct Scales {
    float dmin;
  };
  static Scales prepare(const Block& b) { return {fp16(b.dmin)}; }
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    v128_t lo, hi;
    bits32(b.qs + 32 * (j / 4), 2 * (j % 4), 3, &lo, &hi);
    return scaled_unit(b, s, lo, hi, j);
  }
  // Unit j from its sub-blocks' quants (0..3) as bytes.
  static Unit16 scaled_unit(const Block& b, const Scales&, v128_t lo, v128_t hi, int j) {
    return scaled2(gemm::widen(lo, hi), b.scales[2 * j] & 0xF, b.scales[2 * j + 1] & 0xF);
  }
  // scales[k] >> 4 = the min of sub-block k.
  static float extra(const Block& b, const Scales& s, int j, int e) {
    return -s.dmin * static_cast<float>(b.scales[2 * j + e - 1] >> 4);
  }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts&) {
    return kquant::row_q2_k(nb, x, y, act);
  }
  static constexpr const PairsFn& pairs = q2_k_pairs;
};

// Q2_K_IL / Q3_K_IL (core/quant/interleave.h) over Q2K / Q3K: prefill takes a block's 16 sub-blocks
// out of the layout once (prepare: their values as bytes, q2_q3_sub_blocks) and scales them as the
// natural layout's units; decode runs the layout's row-pair slot.
template <typename F, DType kLayout, const PairsIlFn& slot>
struct SubBlocksOnce {
  using Block = typename F::Block;
  static constexpr DType kType = kLayout;
  static constexpr int kExtra = F::kExtra;
  static constexpr gemm::ActExtra kAct = F::kAct;
  struct Scales {
    v128_t sub[16];
    typename F::Scales f;
  };
  static Scales prepare(const Block& b) {
    Scales s;
    if constexpr (requires { b.hmask; }) {
      q2_q3_sub_blocks(b.qs, b.hmask, s.sub);
    } else {
      q2_q3_sub_blocks(b.qs, nullptr, s.sub);
    }
    s.f = F::prepare(b);
    return s;
  }
  static Unit16 unit(const Block& b, const Scales& s, int j) {
    return F::scaled_unit(b, s.f, s.sub[2 * j], s.sub[2 * j + 1], j);
  }
  static float extra(const Block& b, const Scales& s, int j, int e) { return F::extra(b, s.f, j, e); }
  static const BlockQ8_K* acts(int64_t n, const uint8_t* a) { return acts_q2_k_il(n, a); }
  static constexpr const PairsIlFn& il_pairs = slot;
};
using Q2KIL = SubBlocksOnce<Q2K, DType::Q2_K_IL, q2_k_il_pairs>;
using Q3KIL = SubBlocksOnce<Q3K, DType::Q3_K_IL, q3_k_il_pairs>;

struct IQ4XS {
  using Block = BlockIQ4_XS;
  static constexpr int kExtra = 0;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kNone;
  static constexpr bool kTwoRows = true;
  struct Scales {};
  static Scales prepare(const Block&) { return {}; }
  // Sub-block j: low nibbles of qs[16j..16j+15] = elements 0..15, high nibbles 16..31.
  static Unit16 unit(const Block& b, const Scales&, int j) {
    const v128_t table = load(kIQ4NLValues), q = load(b.qs + 16 * j);
    const v128_t lo = wasm_i8x16_swizzle(table, wasm_v128_and(q, wasm_i8x16_splat(0x0F)));
    const v128_t hi = wasm_i8x16_swizzle(table, wasm_u8x16_shr(q, 4));
    return gemm::scaled(gemm::widen(lo, hi), iq4_xs_scale(b.scales_l, b.scales_h, j) - 32);
  }
  static float extra(const Block&, const Scales&, int, int) { return 0.0f; }
  // The u8 super-blocks (gemm_superblock.h's superblocks_u8): each value + 128 as a byte (1..241),
  // and the sub-block scale ls - 32 unit() multiplies in.
  static gemm::UnitBytes unit_u8(const Block& b, int j) {
    const v128_t table = gemm::iq4_nl_values_u8(), q = load(b.qs + 16 * j);
    return {wasm_i8x16_swizzle(table, wasm_v128_and(q, wasm_i8x16_splat(0x0F))),
            wasm_i8x16_swizzle(table, wasm_u8x16_shr(q, 4))};
  }
  static int32_t unit_scale_signed(const Block& b, int j) { return iq4_xs_scale(b.scales_l, b.scales_h, j) - 32; }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts&) {
    return kquant::row_iq4_xs(nb, x, y, act);
  }
  static constexpr const PairsFn& pairs = iq4_xs_pairs;
};

}  // namespace

void register_gemm_kquant(KernelTable& t) {
  // superblocks splits its tokens into passes itself (gemm_all_tokens).
  auto tile = [&](DType type, GemmFn fn) {
    t.gemm[static_cast<uint32_t>(type)] = fn;
    t.gemm_all_tokens[static_cast<uint32_t>(type)] = true;
  };
  tile(DType::Q2_K, gemm::superblocks<Q2K>);
  tile(DType::Q3_K, gemm::superblocks<Q3K>);
  tile(DType::Q4_K, gemm::superblocks<Q4K>);
  tile(DType::Q5_K, gemm::superblocks<Q5K>);
  tile(DType::Q6_K, gemm::superblocks<Q6K>);
  tile(DType::Q4_K_IL, gemm::superblocks<Q4KIL>);
  tile(DType::Q6_K_IL, gemm::superblocks<Q6KIL>);
  tile(DType::Q2_K_IL, gemm::superblocks<Q2KIL>);
  tile(DType::Q3_K_IL, gemm::superblocks<Q3KIL>);
  tile(DType::IQ4_XS, gemm::superblocks<IQ4XS>);
}

}  // namespace ox::kernels::simd128
