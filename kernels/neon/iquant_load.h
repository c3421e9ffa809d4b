// Block loaders of the codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M)
// for the NEON dot products (iquant_impl.h) and tile kernels (gemm_kquant_impl.h, dotprod/
// gemm_lanes.h), under the loader contract of gemm_kquant_load.h. Each unit's weights come out
// as int8 lanes whose dot with the activation quants, times the unit's int8 scale, adds up to the
// scalar reference's integer block sum (core/quant/iq2.cpp, iq3.cpp, iq1.cpp); kDotFactor is the
// exact power of two the reference applies to the float sum at the end.
#pragma once

#include <array>
#include <cstddef>

#include "core/quant/blocks.h"
#include "core/quant/dtype.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/iq_grids_iq3_iq1.h"
#include "kernels/neon/gemm_tile.h"

namespace ox::kernels::neon_common {
namespace {

// ksigns_iq2xs (kIQ2Signs) as lanes: entry i, byte j = -1 where bit j of the sign
// byte i | parity(i) << 7 is set, else +1 (a multiply by it applies the signs).
constexpr std::array<uint64_t, 128> make_sign_lanes() {
  std::array<uint64_t, 128> out{};
  for (uint32_t i = 0; i < 128; ++i) {
    const uint32_t bits = i | ((static_cast<uint32_t>(__builtin_popcount(i)) & 1u) << 7);
    for (int j = 0; j < 8; ++j) out[i] |= static_cast<uint64_t>((bits >> j) & 1 ? 0xFF : 0x01) << (8 * j);
  }
  return out;
}
inline constexpr std::array<uint64_t, 128> kSignLanes = make_sign_lanes();

// Two 8-byte codebook entries (8 elements each) as lanes 0-7 and 8-15.
inline int8x16_t entry_pair(const uint64_t* grid, uint32_t i0, uint32_t i1) {
  return vcombine_s8(vld1_s8(reinterpret_cast<const int8_t*>(grid + i0)),
                     vld1_s8(reinterpret_cast<const int8_t*>(grid + i1)));
}

// Four 4-byte codebook entries (IQ3: 4 elements each) as lanes 4j..4j+3.
inline int8x16_t entry_quad(const uint32_t* grid, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  uint32x4_t v = vdupq_n_u32(grid[i0]);
  v = vld1q_lane_u32(grid + i1, v, 1);
  v = vld1q_lane_u32(grid + i2, v, 2);
  v = vld1q_lane_u32(grid + i3, v, 3);
  return vreinterpretq_s8_u32(v);
}

// w with the signs of two 7-bit sign fields (lanes 0-7, 8-15) applied.
inline int8x16_t signed7(int8x16_t w, uint32_t s0, uint32_t s1) {
  return vmulq_s8(w, entry_pair(reinterpret_cast<const uint64_t*>(kSignLanes.data()), s0, s1));
}

// w with 16 stored sign bits applied: bit j of byte 0 negates lane j, of byte 1 lane 8 + j.
inline int8x16_t signed8(int8x16_t w, uint16_t bits) {
  static const uint8_t kByte[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t spread = vqtbl1q_u8(vreinterpretq_u8_u16(vdupq_n_u16(bits)), vld1q_u8(kByte));
  const int8x16_t neg = vreinterpretq_s8_u8(vtstq_u8(spread, vld1q_u8(kBit)));  // -1 where set
  return vsubq_s8(veorq_s8(w, neg), neg);
}

// 2 s + 1 of 16 nibbles (IQ2_XS / IQ2_S, IQ3_S's 8): unit 2i is the low nibble of byte i.
inline int8x16_t odd_nibble_scales(uint8x8_t packed) {
  const uint8x8_t lo = vand_u8(packed, vdup_n_u8(0x0F)), hi = vshr_n_u8(packed, 4);
  const uint8x16_t s = vcombine_u8(vzip1_u8(lo, hi), vzip2_u8(lo, hi));
  return vreinterpretq_s8_u8(vorrq_u8(vshlq_n_u8(s, 1), vdupq_n_u8(1)));
}

// What every i-quant loader shares: no mins, and groups not unrolled (the per-unit table lookups
// are the work either way; not measured, as there is no ARM hardware to measure on).
struct IqLoad {
  static constexpr bool kHasMin = false;
  static constexpr uint64_t kDmin = 0;
  static constexpr int kMinTerms = 0;
  static constexpr bool kUnrollGroups = false;
  static void mins(const uint8_t*, int16x8_t&, int16x8_t&) {}
  static void min_terms(const uint8_t*, int16x8_t[2]) {}
};

// The fp16 super-block scale d in the block's first two bytes (all but IQ1_M).
struct HalfD {
  static constexpr uint64_t kD = 0;
  static float d(const uint8_t* b) { return fp16(load_u16(b)); }
};

// Formats with one scale per sub-block of 32 (IQ2_XXS, IQ3_XXS, IQ3_S, IQ1_S): unit = group =
// sub-block ib, elements 32ib..32ib+31 in two vectors.
template <typename Block>
struct SubBlockUnits : IqLoad, HalfD {
  static constexpr uint64_t kBytes = sizeof(Block);
  static constexpr int kUnits = 8, kVecs = 2, kGroups = 8, kPerGroup = 1;
  static int unit(int g, int) { return g; }
};

// IQ2_XXS: unit ib = 32 elements = qs bytes 8ib..8ib+7: 4 entry indices, then a u32 of four
// 7-bit sign fields (one per 8 elements) and the scale ls in bits 28..31; weight 2 ls + 1 in eighths.
struct LoadIQ2_XXS : SubBlockUnits<BlockIQ2_XXS> {
  static constexpr float kDotFactor = 0.125f;
  static const uint8_t* qs(const uint8_t* b, int ib) { return b + offsetof(BlockIQ2_XXS, qs) + 8 * ib; }
  static int8x16_t scales(const uint8_t* b) {
    uint64_t v = 0;
    for (int ib = 0; ib < 8; ++ib) v |= static_cast<uint64_t>(2 * (load_u32(qs(b, ib) + 4) >> 28) + 1) << (8 * ib);
    return vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(v), vcreate_u64(0)));
  }
  template <int>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const uint8_t* q = qs(b, g);
    const uint32_t aux = load_u32(q + 4);
    w[0] = signed7(entry_pair(quant::kIQ2XXSGrid, q[0], q[1]), aux & 127, (aux >> 7) & 127);
    w[1] = signed7(entry_pair(quant::kIQ2XXSGrid, q[2], q[3]), (aux >> 14) & 127, (aux >> 21) & 127);
  }
};

// IQ2_XS / IQ2_S: unit u = 16 elements (octets 2u, 2u + 1), weight 2 ls + 1 in eighths, ls the
// nibble u % 2 of scales[u / 2]; group g = the 32 elements of scales[g].
template <typename Block>
struct Iq2NibbleScales : IqLoad, HalfD {
  static constexpr uint64_t kBytes = sizeof(Block);
  static constexpr float kDotFactor = 0.125f;
  static constexpr int kUnits = 16, kVecs = 1, kGroups = 8, kPerGroup = 2;
  static int unit(int g, int k) { return 2 * g + k; }
  static int8x16_t scales(const uint8_t* b) { return odd_nibble_scales(vld1_u8(b + offsetof(Block, scales))); }
};

// IQ2_XS: one u16 per octet, a 9-bit index and 7 sign bits above it.
struct LoadIQ2_XS : Iq2NibbleScales<BlockIQ2_XS> {
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {
    const uint32_t v = load_u32(b + offsetof(BlockIQ2_XS, qs) + 8 * g + 4 * k);
    const uint32_t v0 = v & 0xFFFF, v1 = v >> 16;
    w[0] = signed7(entry_pair(quant::kIQ2XSGrid, v0 & 511, v1 & 511), v0 >> 9, v1 >> 9);
  }
};

// IQ2_S: octet o's index is qs[o] plus bits 2(o % 4).. of qh[o / 4] as bits 8-9, its 8 signs are
// qs[32 + o]; group g's octets 4g..4g+3 share qh[g].
struct LoadIQ2_S : Iq2NibbleScales<BlockIQ2_S> {
  template <int k>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {
    const uint8_t* q = b + offsetof(BlockIQ2_S, qs) + 4 * g + 2 * k;
    const uint32_t qh = b[offsetof(BlockIQ2_S, qh) + g];
    const uint32_t i0 = q[0] | ((qh << (8 - 4 * k)) & 0x300), i1 = q[1] | ((qh << (6 - 4 * k)) & 0x300);
    w[0] = signed8(entry_pair(quant::kIQ2SGrid, i0, i1), load_u16(q + kQK_K / 8));
  }
};

// IQ3_XXS: unit ib = 32 elements; qs[8ib..8ib+7] index 4-element entries, the u32 at qs[64 + 4ib]
// holds four 7-bit sign fields (8 elements each) and s in bits 28..31; weight 2 s + 1 in quarters.
struct LoadIQ3_XXS : SubBlockUnits<BlockIQ3_XXS> {
  static constexpr float kDotFactor = 0.25f;
  static uint32_t aux(const uint8_t* b, int ib) { return load_u32(b + offsetof(BlockIQ3_XXS, qs) + kQK_K / 4 + 4 * ib); }
  static int8x16_t scales(const uint8_t* b) {
    uint64_t v = 0;
    for (int ib = 0; ib < 8; ++ib) v |= static_cast<uint64_t>(2 * (aux(b, ib) >> 28) + 1) << (8 * ib);
    return vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(v), vcreate_u64(0)));
  }
  template <int>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const uint8_t* q = b + offsetof(BlockIQ3_XXS, qs) + 8 * g;
    const uint32_t a = aux(b, g);
    w[0] = signed7(entry_quad(quant::kIQ3XXSGrid, q[0], q[1], q[2], q[3]), a & 127, (a >> 7) & 127);
    w[1] = signed7(entry_quad(quant::kIQ3XXSGrid, q[4], q[5], q[6], q[7]), (a >> 14) & 127, (a >> 21) & 127);
  }
};

// IQ3_S: unit ib = 32 elements; entry g's 9-bit index is qs[8ib + g] plus bit g of qh[ib], the
// signs are bits of signs[4ib..4ib+3]; weight 1 + 2 s, s the nibble ib % 2 of scales[ib / 2].
struct LoadIQ3_S : SubBlockUnits<BlockIQ3_S> {
  static constexpr float kDotFactor = 1.0f;
  static int8x16_t scales(const uint8_t* b) {
    const uint32_t packed = load_u32(b + offsetof(BlockIQ3_S, scales));
    return odd_nibble_scales(vcreate_u8(packed));  // units 8..15 read zero bytes: unused
  }
  template <int>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const uint8_t* q = b + offsetof(BlockIQ3_S, qs) + 8 * g;
    const uint32_t qh = b[offsetof(BlockIQ3_S, qh) + g];
    uint32_t idx[8];
    for (int j = 0; j < 8; ++j) idx[j] = q[j] | ((qh << (8 - j)) & 256);
    const uint8_t* signs = b + offsetof(BlockIQ3_S, signs) + 4 * g;
    w[0] = signed8(entry_quad(quant::kIQ3SGrid, idx[0], idx[1], idx[2], idx[3]), load_u16(signs));
    w[1] = signed8(entry_quad(quant::kIQ3SGrid, idx[4], idx[5], idx[6], idx[7]), load_u16(signs + 2));
  }
};

// 8 grid + delta (delta = +-1, lanes 0-7 / 8-15): the reference's 8 grid . q8 +- sum q8 in one dot.
inline int8x16_t iq1_weights(int8x16_t grid, int8x16_t delta) { return vaddq_s8(vshlq_n_s8(grid, 3), delta); }
// +1, or -1 where the sign bit `mask` of v is set.
inline int8_t iq1_delta(uint32_t v, uint32_t mask) { return (v & mask) ? -1 : 1; }

// IQ1_S: unit ib = 32 elements, qh[ib] holds the 3 high index bits of entry l at 3l, s at 12..14
// and the delta's sign at bit 15; weight 2 s + 1 in eighths (8 grid +- 1, see iq1_weights). The
// reference takes sum q8 from the bsums: the same integer for every Q8_K block.
struct LoadIQ1_S : SubBlockUnits<BlockIQ1_S> {
  static constexpr float kDotFactor = 0.125f;
  static int8x16_t scales(const uint8_t* b) {
    const uint16x8_t qh = vld1q_u16(reinterpret_cast<const uint16_t*>(b + offsetof(BlockIQ1_S, qh)));
    const uint16x8_t s = vandq_u16(vshrq_n_u16(qh, 12), vdupq_n_u16(7));
    const uint8x8_t odd = vorr_u8(vshl_n_u8(vmovn_u16(s), 1), vdup_n_u8(1));
    return vreinterpretq_s8_u8(vcombine_u8(odd, vdup_n_u8(0)));
  }
  template <int>
  static void unpack(const uint8_t* b, int g, int8x16_t w[2]) {
    const uint8_t* q = b + offsetof(BlockIQ1_S, qs) + 4 * g;
    const uint32_t qh = load_u16(b + offsetof(BlockIQ1_S, qh) + 2 * g);
    const int8x16_t delta = vdupq_n_s8(iq1_delta(qh, 0x8000));
    const uint32_t i0 = q[0] | ((qh << 8) & 0x700), i1 = q[1] | ((qh << 5) & 0x700);
    const uint32_t i2 = q[2] | ((qh << 2) & 0x700), i3 = q[3] | ((qh >> 1) & 0x700);
    w[0] = iq1_weights(entry_pair(quant::kIQ1SGrid, i0, i1), delta);
    w[1] = iq1_weights(entry_pair(quant::kIQ1SGrid, i2, i3), delta);
  }
};

// IQ1_M: unit h = 16 elements = entries 2h, 2h + 1, whose high index bits and delta signs are the
// low / high nibble of qh[h]; s = bits 3(h % 4).. of u16 h / 4 of scales, whose top nibbles
// hold the fp16 d. Weight 2 s + 1 in eighths.
struct LoadIQ1_M : IqLoad {
  static constexpr uint64_t kBytes = sizeof(BlockIQ1_M);
  static constexpr float kDotFactor = 0.125f;
  static constexpr int kUnits = 16, kVecs = 1, kGroups = 16, kPerGroup = 1;
  static int unit(int g, int) { return g; }
  static uint16_t d_bits(const uint8_t* b) {
    const uint8_t* sc = b + offsetof(BlockIQ1_M, scales);
    return static_cast<uint16_t>((load_u16(sc) >> 12) | ((load_u16(sc + 2) >> 8) & 0x00F0) |
                                 ((load_u16(sc + 4) >> 4) & 0x0F00) | (load_u16(sc + 6) & 0xF000));
  }
  static float d(const uint8_t* b) { return fp16(d_bits(b)); }
  static float32x4_t d4(const uint8_t* const x[kTileRows]) {
    uint16x4_t h = vdup_n_u16(d_bits(x[0]));
    h = vset_lane_u16(d_bits(x[1]), h, 1);
    h = vset_lane_u16(d_bits(x[2]), h, 2);
    h = vset_lane_u16(d_bits(x[3]), h, 3);
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
  }
  // u16 lanes: word h / 4 (a tbl of its two bytes), shifted right by 3 (h % 4).
  static int8x16_t scales(const uint8_t* b) {
    static const uint8_t kWords[2][16] = {{0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3},
                                          {4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7}};
    static const int16_t kShift[8] = {0, -3, -6, -9, 0, -3, -6, -9};
    const uint8x16_t sc = vcombine_u8(vld1_u8(b + offsetof(BlockIQ1_M, scales)), vdup_n_u8(0));
    const int16x8_t shift = vld1q_s16(kShift);
    uint8x8_t s[2];
    for (int half = 0; half < 2; ++half) {
      const uint16x8_t words = vreinterpretq_u16_u8(vqtbl1q_u8(sc, vld1q_u8(kWords[half])));
      s[half] = vmovn_u16(vandq_u16(vshlq_u16(words, shift), vdupq_n_u16(7)));
    }
    const uint8x16_t v = vcombine_u8(s[0], s[1]);
    return vreinterpretq_s8_u8(vorrq_u8(vshlq_n_u8(v, 1), vdupq_n_u8(1)));
  }
  template <int>
  static void unpack(const uint8_t* b, int g, int8x16_t w[1]) {
    const uint8_t* q = b + offsetof(BlockIQ1_M, qs) + 2 * g;
    const uint32_t qh = b[offsetof(BlockIQ1_M, qh) + g];
    const int8x16_t delta = vcombine_s8(vdup_n_s8(iq1_delta(qh, 0x08)), vdup_n_s8(iq1_delta(qh, 0x80)));
    w[0] = iq1_weights(entry_pair(quant::kIQ1SGrid, q[0] | ((qh << 8) & 0x700), q[1] | ((qh << 4) & 0x700)), delta);
  }
};

// The registry of these loaders: fn(type, Load{}) for each format, which patch() turns into the
// vec_dot and gemm instantiations of its table (no per-format wrapper functions).
template <typename Fn>
inline void for_each_iquant(Fn&& fn) {
  fn(DType::IQ2_XXS, LoadIQ2_XXS{});
  fn(DType::IQ2_XS, LoadIQ2_XS{});
  fn(DType::IQ2_S, LoadIQ2_S{});
  fn(DType::IQ3_XXS, LoadIQ3_XXS{});
  fn(DType::IQ3_S, LoadIQ3_S{});
  fn(DType::IQ1_S, LoadIQ1_S{});
  fn(DType::IQ1_M, LoadIQ1_M{});
}

}  // namespace
}  // namespace ox::kernels::neon_common
