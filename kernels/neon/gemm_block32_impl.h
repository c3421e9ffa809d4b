// Tile (gemm) bodies of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL) vs
// Q8_0 / Q8_1, templated on the int8 dot primitive: per-format block loaders and Block32Tile.
// Reference: quant_traits(W).vec_dot_ref of each format; integer block sums exact.
#pragma once

#include <cstddef>

#include "core/quant/blocks.h"
#include "kernels/neon/block32_impl.h"
#include "kernels/neon/gemm_tile.h"

namespace ox::kernels::neon_common {
namespace {

// Loader contract: Act (activation block type), kBytes (weight block size), kD / kM (byte offsets
// of the fp16 scale and, where the format has one, the fp16 offset m; kHasMin says which), and
// unpack(block, lo, hi) giving the signed int8 weights (without d or m).
struct LoadQ4_0 {
  using Act = BlockQ8_0;
  static constexpr uint64_t kBytes = sizeof(BlockQ4_0), kD = offsetof(BlockQ4_0, d), kM = 0;
  static constexpr bool kHasMin = false;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ4_0, qs));
    lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), vdupq_n_s8(8));
    hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
  }
};

struct LoadQ4_1 {
  using Act = BlockQ8_1;
  static constexpr uint64_t kBytes = sizeof(BlockQ4_1), kD = offsetof(BlockQ4_1, d), kM = offsetof(BlockQ4_1, m);
  static constexpr bool kHasMin = true;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ4_1, qs));
    lo = vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F)));
    hi = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
  }
};

struct LoadQ5_0 {
  using Act = BlockQ8_0;
  static constexpr uint64_t kBytes = sizeof(BlockQ5_0), kD = offsetof(BlockQ5_0, d), kM = 0;
  static constexpr bool kHasMin = false;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const uint32_t qh = load_u32(b + offsetof(BlockQ5_0, qh));
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ5_0, qs));
    const uint8x16_t l = vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), q5_high_bits(qh, 0));
    const uint8x16_t h = vorrq_u8(vshrq_n_u8(q, 4), q5_high_bits(qh, 16));
    lo = vsubq_s8(vreinterpretq_s8_u8(l), vdupq_n_s8(16));
    hi = vsubq_s8(vreinterpretq_s8_u8(h), vdupq_n_s8(16));
  }
};

struct LoadQ5_1 {
  using Act = BlockQ8_1;
  static constexpr uint64_t kBytes = sizeof(BlockQ5_1), kD = offsetof(BlockQ5_1, d), kM = offsetof(BlockQ5_1, m);
  static constexpr bool kHasMin = true;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const uint32_t qh = load_u32(b + offsetof(BlockQ5_1, qh));
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockQ5_1, qs));
    lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), q5_high_bits(qh, 0)));
    hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), q5_high_bits(qh, 16)));
  }
};

struct LoadQ8_0 {
  using Act = BlockQ8_0;
  static constexpr uint64_t kBytes = sizeof(BlockQ8_0), kD = offsetof(BlockQ8_0, d), kM = 0;
  static constexpr bool kHasMin = false;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const int8_t* q = reinterpret_cast<const int8_t*>(b + offsetof(BlockQ8_0, qs));
    lo = vld1q_s8(q);
    hi = vld1q_s8(q + 16);
  }
};

struct LoadIQ4_NL {
  using Act = BlockQ8_0;
  static constexpr uint64_t kBytes = sizeof(BlockIQ4_NL), kD = offsetof(BlockIQ4_NL, d), kM = 0;
  static constexpr bool kHasMin = false;
  static inline void unpack(const uint8_t* b, int8x16_t& lo, int8x16_t& hi) {
    const int8x16_t table = vld1q_s8(kIQ4NLValues);
    const uint8x16_t q = vld1q_u8(b + offsetof(BlockIQ4_NL, qs));
    lo = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
    hi = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
  }
};

// Four rows x T tokens. Per block: each row unpacked once; per token, the four rows' integer
// dots are combined (reduce4) into one vector, converted once and scaled by d_row * d_token in
// one FMA; Q4_1 / Q5_1 add m_row * s_token (s = d * sum(q) of the Q8_1 block) in a second.
template <typename Dot, typename Load>
struct Block32Tile {
  int64_t nb;  // blocks per row

  template <int T>
  void run(const uint8_t* const rows[kTileRows], const uint8_t* a, uint64_t a_stride, float32x4_t out[T]) const {
    using Act = typename Load::Act;
    constexpr uint64_t kActBytes = sizeof(Act), kActQs = offsetof(Act, qs);
    const int32x4_t zero = vdupq_n_s32(0);
    float32x4_t acc[T];
    for (int t = 0; t < T; ++t) acc[t] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* x[kTileRows];
      int8x16_t lo[kTileRows], hi[kTileRows];
      for (int r = 0; r < kTileRows; ++r) {
        x[r] = rows[r] + static_cast<uint64_t>(i) * Load::kBytes;
        Load::unpack(x[r], lo[r], hi[r]);
      }
      const float32x4_t dw = load_fp16x4(x, Load::kD);
      const uint8_t* ab = a + static_cast<uint64_t>(i) * kActBytes;
      for (int t = 0; t < T; ++t) {
        const uint8_t* at = ab + t * a_stride;
        const int8_t* q = reinterpret_cast<const int8_t*>(at + kActQs);
        const int8x16_t al = vld1q_s8(q), ah = vld1q_s8(q + 16);
        int32x4_t d[kTileRows];
        for (int r = 0; r < kTileRows; ++r) d[r] = Dot::dot(Dot::dot(zero, lo[r], al), hi[r], ah);
        const float dy = fp16(load_u16(at + offsetof(Act, d)));
        acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(reduce4(d)), vmulq_n_f32(dw, dy));
        if constexpr (Load::kHasMin) {
          acc[t] = vfmaq_n_f32(acc[t], load_fp16x4(x, Load::kM), fp16(load_u16(at + offsetof(BlockQ8_1, s))));
        }
      }
    }
    for (int t = 0; t < T; ++t) out[t] = acc[t];
  }
};

// Tokens per tile: 4 rows x 4 tokens keeps 8 unpacked weight vectors, 4 accumulators and the
// per-token temporaries well inside the 32 vector registers.
constexpr int kBlock32Tokens = 4;

template <typename Dot, typename Load>
void gemm_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                  uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const Block32Tile<Dot, Load> tile{n / 32};
  gemm_tiles<kBlock32Tokens>(tile, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace
}  // namespace ox::kernels::neon_common
