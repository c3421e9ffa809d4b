// Small AVX2 building blocks shared by the kernel files of this folder. Everything is `static
// inline`: each ISA's files are compiled with different -m flags, so helpers must never become
// one shared (COMDAT) copy that the linker might take from an AVX-512 object.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/quant/blocks.h"
#include "core/quant/traits.h"

namespace ox::kernels::avx2 {

static inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

// ox::quant::fp16_saturate (core/quant/reference.h), restated with internal linkage: clamp to
// +-65504 with fmin/fmax (NaN gives -65504 like the reference), then round to nearest even.
static inline uint16_t fp16_saturate(float f) {
  return f32_to_fp16(__builtin_fminf(65504.0f, __builtin_fmaxf(-65504.0f, f)));
}

static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

static inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
static inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// 16 packed bytes -> 32 nibbles in element order: low nibbles (elements 0..15) in the low
// lane, high nibbles (elements 16..31) in the high lane, as Q4_0/IQ4_NL store a block. The
// bytes are broadcast to both lanes by the load itself; one variable shift (0 | 4) splits them.
static inline __m256i unpack_nibbles(const uint8_t* p) {
  const __m256i both = _mm256_broadcastsi128_si256(load128(p));
  const __m256i split = _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
  return _mm256_and_si256(split, _mm256_set1_epi8(0x0F));
}

// dx[b] * dy[b] for 8 consecutive blocks whose first field is the fp16 scale `d`: 16 halves
// gathered into two vectors and converted together instead of one by one.
template <typename X, typename Y>
static inline __m256 scale8(const X* x, const Y* y) {
  const __m128i hx =
      _mm_setr_epi16(static_cast<int16_t>(x[0].d), static_cast<int16_t>(x[1].d), static_cast<int16_t>(x[2].d),
                     static_cast<int16_t>(x[3].d), static_cast<int16_t>(x[4].d), static_cast<int16_t>(x[5].d),
                     static_cast<int16_t>(x[6].d), static_cast<int16_t>(x[7].d));
  const __m128i hy =
      _mm_setr_epi16(static_cast<int16_t>(y[0].d), static_cast<int16_t>(y[1].d), static_cast<int16_t>(y[2].d),
                     static_cast<int16_t>(y[3].d), static_cast<int16_t>(y[4].d), static_cast<int16_t>(y[5].d),
                     static_cast<int16_t>(y[6].d), static_cast<int16_t>(y[7].d));
  return _mm256_mul_ps(_mm256_cvtph_ps(hx), _mm256_cvtph_ps(hy));
}

// MXFP4's scales 2^(e - 128) of 8 blocks, e in the i32 lanes: the float bits (e - 1) << 23, or
// for e < 2 the subnormals 0x200000 << e, exactly mxfp4_scale (core/quant/blocks.h).
static inline __m256 mxfp4_scales(__m256i e) {
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}

// scale8 for MXFP4 weights, whose scale is the exponent byte e rather than an fp16 d.
static inline __m256 scale8(const BlockMXFP4* x, const BlockQ8_0* y) {
  const __m256i e = _mm256_setr_epi32(x[0].e, x[1].e, x[2].e, x[3].e, x[4].e, x[5].e, x[6].e, x[7].e);
  const __m128i hy =
      _mm_setr_epi16(static_cast<int16_t>(y[0].d), static_cast<int16_t>(y[1].d), static_cast<int16_t>(y[2].d),
                     static_cast<int16_t>(y[3].d), static_cast<int16_t>(y[4].d), static_cast<int16_t>(y[5].d),
                     static_cast<int16_t>(y[6].d), static_cast<int16_t>(y[7].d));
  return _mm256_mul_ps(mxfp4_scales(e), _mm256_cvtph_ps(hy));
}

// dx * dy of one block (the tails of the loops that use scale8).
template <typename X, typename Y>
static inline float block_scale(const X& x, const Y& y) {
  return fp16(x.d) * fp16(y.d);
}
static inline float block_scale(const BlockMXFP4& x, const BlockQ8_0& y) { return mxfp4_scale(x.e) * fp16(y.d); }

// sum_i m_i * s_i of Q4_1 / Q5_1 blocks against Q8_1 (x = d*q + m, and s = dy * sum(a) is
// stored): eight blocks per vector step, so no serial chain of scalar adds.
template <typename X, typename Y>
static inline float sum_min_terms(int64_t nb, const X* x, const Y* y) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 7 < nb; i += 8) {
    const X* xb = x + i;
    const Y* yb = y + i;
    const __m128i m =
        _mm_setr_epi16(static_cast<int16_t>(xb[0].m), static_cast<int16_t>(xb[1].m), static_cast<int16_t>(xb[2].m),
                       static_cast<int16_t>(xb[3].m), static_cast<int16_t>(xb[4].m), static_cast<int16_t>(xb[5].m),
                       static_cast<int16_t>(xb[6].m), static_cast<int16_t>(xb[7].m));
    const __m128i s =
        _mm_setr_epi16(static_cast<int16_t>(yb[0].s), static_cast<int16_t>(yb[1].s), static_cast<int16_t>(yb[2].s),
                       static_cast<int16_t>(yb[3].s), static_cast<int16_t>(yb[4].s), static_cast<int16_t>(yb[5].s),
                       static_cast<int16_t>(yb[6].s), static_cast<int16_t>(yb[7].s));
    acc = _mm256_fmadd_ps(_mm256_cvtph_ps(m), _mm256_cvtph_ps(s), acc);
  }
  float sum = hsum(acc);
  for (; i < nb; ++i) sum += fp16(x[i].m) * fp16(y[i].s);
  return sum;
}

// Byte i = 0xFF if bit i of `bits` is set, else 0 (the 5th-bit planes of Q5_0/Q5_1).
static inline __m256i expand_bits(uint32_t bits) {
  // Byte i takes byte i/8 of `bits`, then tests bit i%8 of it.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int32_t>(bits)),
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// i16 pair sums of u8 x s8 products (no saturation while |a| * |b| * 2 < 2^15).
static inline __m256i mul_u8s8(__m256i a, __m256i b) { return _mm256_maddubs_epi16(a, b); }

// i32 lanes = sums of 4 adjacent i16 pairs.
static inline __m256i sum_pairs_i16(__m256i v) { return _mm256_madd_epi16(v, _mm256_set1_epi16(1)); }

// s8 x s8 through the sign trick: |a| * sign(b, a). Exact when b never holds -128, which our
// activation quantizers guarantee (they clamp to [-127, 127]); a may be any byte.
static inline __m256i mul_s8s8(__m256i a, __m256i b) {
  return _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

// Q4_K / Q5_K: 12 bytes -> eight 6-bit scales and eight 6-bit mins, four per u32 (byte j = value j).
// Values 0..3 sit in the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); values 4..7 keep
// their low 4 bits in bytes 8..11 (scale low nibble, min high nibble) and their top 2 bits in
// the spare top bits of bytes 0..3 (scales) and 4..7 (mins).
struct KScales {
  uint32_t scales[2];
  uint32_t mins[2];
};
static inline KScales unpack_k4_scales(const uint8_t* p) {
  uint32_t a[3];
  std::memcpy(a, p, 12);
  KScales k;
  k.scales[0] = a[0] & 0x3f3f3f3fu;
  k.mins[0] = a[1] & 0x3f3f3f3fu;
  k.scales[1] = (a[2] & 0x0f0f0f0fu) | (((a[0] >> 6) & 0x03030303u) << 4);
  k.mins[1] = ((a[2] >> 4) & 0x0f0f0f0fu) | (((a[1] >> 6) & 0x03030303u) << 4);
  return k;
}

// Q3_K: 12 bytes -> sixteen 6-bit scales (0..63, bias 32 not removed), byte j = scale j.
// Scales 0..7 keep their low nibble in the low nibbles of bytes 0..7, scales 8..15 in the high
// nibbles; the top 2 bits of scale j sit in byte 8 + j%4 at bit 2*(j/4). Built in registers:
// going through a u32 array would cost a store-forwarding stall on the 16-byte reload.
static inline __m128i q3_k_scales(const uint8_t* p) {
  uint32_t a[3];
  std::memcpy(a, p, 12);
  const uint32_t w0 = (a[0] & 0x0f0f0f0fu) | ((a[2] & 0x03030303u) << 4);
  const uint32_t w1 = (a[1] & 0x0f0f0f0fu) | (((a[2] >> 2) & 0x03030303u) << 4);
  const uint32_t w2 = ((a[0] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 4) & 0x03030303u) << 4);
  const uint32_t w3 = ((a[1] >> 4) & 0x0f0f0f0fu) | (((a[2] >> 6) & 0x03030303u) << 4);
  return _mm_setr_epi32(static_cast<int>(w0), static_cast<int>(w1), static_cast<int>(w2), static_cast<int>(w3));
}

// IQ4_XS: the 8 sub-block scales with the bias 32 removed, as i32 lanes. The low 4 bits of
// scale ib are nibble ib of scales_l (read as a little-endian u32), the top 2 bits are bits
// 2ib..2ib+1 of scales_h.
static inline __m256i iq4_xs_scales(const uint8_t* scales_l, uint16_t scales_h) {
  uint32_t sl;
  std::memcpy(&sl, scales_l, 4);
  const __m256i lo = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(sl)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
      _mm256_set1_epi32(0xF));
  const __m256i hi =
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                       _mm256_set1_epi32(3));
  return _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
}

// Shuffle controls that repeat i16 word `lo` of the low lane across the low lane and word `hi`
// of the high lane across the high lane (per-sub-block scales for madd). A table, so callers
// get a memory operand rather than a constant built at run time.
struct alignas(32) WordSplatTable {
  uint8_t mask[8][8][32];
};
static constexpr WordSplatTable make_word_splat() {
  WordSplatTable t{};
  for (int lo = 0; lo < 8; ++lo) {
    for (int hi = 0; hi < 8; ++hi) {
      for (int b = 0; b < 32; ++b) t.mask[lo][hi][b] = static_cast<uint8_t>(2 * (b < 16 ? lo : hi) + (b & 1));
    }
  }
  return t;
}
static constexpr WordSplatTable kWordSplat = make_word_splat();
static inline __m256i word_splat_mask(int lo, int hi) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(kWordSplat.mask[lo][hi]));
}

// Few-token products (gemm_few_* here and in avx512/: a decode step of several sequences): each
// weight row is unpacked once for a group of up to kGroup tokens while it sits in L1.
// The f32 vector operations the AVX2 float kernels share (the gemm[F32] and gemm_wide tiles,
// attention's); each kernel's vector type derives from it and adds only what it alone needs.
struct F32x8 {
  static constexpr int kLanes = 8;
  using Reg = __m256;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg loadu(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static float hsum(Reg v) { return avx2::hsum(v); }
};

namespace few_tokens {

constexpr int kGroup = 8;

// The gemm entry points of the formats with a gemm_few_* kernel take it from 2 tokens up to kMax:
// there it costs less than packing panels, whose cost per row is several dots' worth and pays for
// itself only over many tokens; one token stays on the format's one-token path. Measured on Zen 4
// (bench/batch_decode_bench.cpp, 1B Q4_K_M, CPU time of one thread per step): Q4_K / Q6_K 4 tokens
// 160 -> 95 ms, 8 tokens 188 -> 166 ms (by the per-token costs, panels win from ~10).
constexpr int64_t kMax = 8;
static inline bool pay(int64_t n_tokens) { return n_tokens >= 2 && n_tokens <= kMax; }

// fn(std::integral_constant<int, T>{}, t0) for the tokens [t0, t0 + T): groups of kGroup, then
// the remainder (T is a compile-time constant: the kernels keep one accumulator per token).
template <typename Fn>
static inline void by_groups(int64_t n_tokens, Fn fn) {
  int64_t t0 = 0;
  for (; t0 + kGroup <= n_tokens; t0 += kGroup) fn(std::integral_constant<int, kGroup>{}, t0);
  switch (n_tokens - t0) {
    case 1: fn(std::integral_constant<int, 1>{}, t0); break;
    case 2: fn(std::integral_constant<int, 2>{}, t0); break;
    case 3: fn(std::integral_constant<int, 3>{}, t0); break;
    case 4: fn(std::integral_constant<int, 4>{}, t0); break;
    case 5: fn(std::integral_constant<int, 5>{}, t0); break;
    case 6: fn(std::integral_constant<int, 6>{}, t0); break;
    case 7: fn(std::integral_constant<int, 7>{}, t0); break;
    default: break;
  }
  static_assert(kGroup == 8, "the switch covers remainders up to 7");
}

// A row two ahead of the one being multiplied into L1 (as tile::dots_by_row does: ahead of
// the hardware prefetcher at the row boundary). Prefetching past the matrix cannot fault.
static inline void prefetch_row(const uint8_t* row, uint64_t bytes) {
  const char* p = reinterpret_cast<const char*>(row);
  for (uint64_t off = 0; off < bytes; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

// gemm_few_* over super-blocks of kElems: for each row (the one two ahead prefetched), every group
// of tokens through row_tokens(std::integral_constant<int, T>{}, nb, x, a, a_stride, y, y_stride)
// with x the row's blocks, a the group's first activation row and y its first output.
template <typename Block, int kElems, typename RowTokens>
static inline void rows(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                        uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride, RowTokens row_tokens) {
  const int64_t nb = n / kElems;
  const uint64_t row_bytes = static_cast<uint64_t>(nb) * sizeof(Block);
  for (int64_t r = 0; r < n_rows; ++r) {
    prefetch_row(w + static_cast<uint64_t>(r + 2) * w_stride, row_bytes);
    const auto* x = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r) * w_stride);
    by_groups(n_tokens, [&](auto tokens, int64_t t0) {
      row_tokens(tokens, nb, x, a + static_cast<uint64_t>(t0) * a_stride, a_stride, y + t0 * y_stride + r, y_stride);
    });
  }
}

}  // namespace few_tokens

}  // namespace ox::kernels::avx2
