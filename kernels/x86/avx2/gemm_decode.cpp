// AVX2 few-token products (decode) of the 32-element block formats: eight rows per pass, the
// token's activation block loaded once for all eight, and the eight rows' block sums gathered
// into one vector (vphaddd) before the one int -> float conversion and FMA per block. The 4/5-bit
// formats put two rows in one vector (row 2i in the low 128-bit lane, 2i+1 in the high one).
// Reference: quant_traits(W).vec_dot_ref; integer block sums exact, float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/codebook.h"
#include "kernels/x86/avx2/gemm_decode.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// Row pair nibbles: lanes = (row 2i, row 2i+1); lo = elements 0..15, hi = 16..31 of each row.
struct WeightPair {
  __m256i lo, hi;
};

inline WeightPair pair_nibbles(const uint8_t* q0, const uint8_t* q1) {
  const __m256i v = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(q1), reinterpret_cast<const __m128i*>(q0));
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  return {_mm256_and_si256(v, m4), _mm256_and_si256(_mm256_srli_epi16(v, 4), m4)};
}

// 0x10 in byte j of each lane where bit j (lo) / 16 + j (hi) of that lane's row's qh is set.
inline WeightPair pair_high_bits(const uint8_t* qh0, const uint8_t* qh1) {
  uint32_t h0, h1;
  std::memcpy(&h0, qh0, 4);
  std::memcpy(&h1, qh1, 4);
  const __m256i h = _mm256_setr_epi32(static_cast<int>(h0), 0, 0, 0, static_cast<int>(h1), 0, 0, 0);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i sixteen = _mm256_set1_epi8(16);
  auto spread = [&](char b0, char b1) {
    const __m256i idx = _mm256_setr_epi8(b0, b0, b0, b0, b0, b0, b0, b0, b1, b1, b1, b1, b1, b1, b1, b1, b0, b0, b0,
                                         b0, b0, b0, b0, b0, b1, b1, b1, b1, b1, b1, b1, b1);
    const __m256i s = _mm256_and_si256(_mm256_shuffle_epi8(h, idx), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(s, bit), sixteen);
  };
  return {spread(0, 1), spread(2, 3)};
}

// The formats: where the quants sit, the weight offset (q - offset), and the m term.
struct Q4_0Rows {
  static constexpr uint64_t kW = sizeof(BlockQ4_0), kA = sizeof(BlockQ8_0), kAQs = 2;
  static constexpr int kOffset = 8;
  static constexpr bool kMin = false;
  static WeightPair load(const uint8_t* b0, const uint8_t* b1) { return pair_nibbles(b0 + 2, b1 + 2); }
};

struct Q5_0Rows {
  static constexpr uint64_t kW = sizeof(BlockQ5_0), kA = sizeof(BlockQ8_0), kAQs = 2;
  static constexpr int kOffset = 16;
  static constexpr bool kMin = false;
  static WeightPair load(const uint8_t* b0, const uint8_t* b1) {
    WeightPair w = pair_nibbles(b0 + 6, b1 + 6);
    const WeightPair h = pair_high_bits(b0 + 2, b1 + 2);
    return {_mm256_or_si256(w.lo, h.lo), _mm256_or_si256(w.hi, h.hi)};
  }
};

struct Q4_1Rows {
  static constexpr uint64_t kW = sizeof(BlockQ4_1), kA = sizeof(BlockQ8_1), kAQs = 4;
  static constexpr int kOffset = 0;
  static constexpr bool kMin = true;
  static WeightPair load(const uint8_t* b0, const uint8_t* b1) { return pair_nibbles(b0 + 4, b1 + 4); }
};

struct Q5_1Rows {
  static constexpr uint64_t kW = sizeof(BlockQ5_1), kA = sizeof(BlockQ8_1), kAQs = 4;
  static constexpr int kOffset = 0;
  static constexpr bool kMin = true;
  static WeightPair load(const uint8_t* b0, const uint8_t* b1) {
    WeightPair w = pair_nibbles(b0 + 8, b1 + 8);
    const WeightPair h = pair_high_bits(b0 + 4, b1 + 4);
    return {_mm256_or_si256(w.lo, h.lo), _mm256_or_si256(w.hi, h.hi)};
  }
};

// Decode streams the weights from memory once: reading eight rows side by side is eight streams,
// which the hardware prefetchers follow worse than the one sequential stream of a row-by-row
// walk. So while a group is computed, the next eight rows (contiguous when the stride is the
// row size; past the matrix a prefetch is a harmless no-op) are prefetched front to back, at the
// rate the group consumes its own bytes.
template <uint64_t kBytesPerStep>
inline void prefetch_step(const uint8_t* next_group, int64_t b) {
  const char* p = reinterpret_cast<const char*>(next_group + static_cast<uint64_t>(b) * kBytesPerStep);
  for (uint64_t off = 0; off < kBytesPerStep + 64; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

// Eight fp16 values at `offset` into the blocks of rows 0 2 4 6 1 3 5 7 (`row(r)` = row r's
// block), the lane order the pair sums reduce to; inserted one by one into a vector register.
template <typename Row>
inline __m256 halves_pair_order(Row row, uint64_t offset) {
  auto h = [&](int r) {
    uint16_t v;
    std::memcpy(&v, row(r) + offset, 2);
    return static_cast<int>(v);
  };
  __m128i v = _mm_cvtsi32_si128(h(0));
  v = _mm_insert_epi16(v, h(2), 1);
  v = _mm_insert_epi16(v, h(4), 2);
  v = _mm_insert_epi16(v, h(6), 3);
  v = _mm_insert_epi16(v, h(1), 4);
  v = _mm_insert_epi16(v, h(3), 5);
  v = _mm_insert_epi16(v, h(5), 6);
  v = _mm_insert_epi16(v, h(7), 7);
  return _mm256_cvtph_ps(v);
}

// Eight rows (row r at w + r * stride) against one token: y[0..8) of the 8 results. Each row
// pair's i32 sums go through two levels of vphaddd, which leaves one full block sum per lane
// in the order rows 0 2 4 6 | 1 3 5 7, so one conversion and one FMA cover all eight rows.
template <class F>
void eight_rows(int64_t nb, const uint8_t* w, uint64_t stride, const uint8_t* a, float* y) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i offset = _mm256_set1_epi8(F::kOffset);
  __m256 acc = _mm256_setzero_ps(), min_acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* ab = a + b * F::kA;
    // Rows 0-3 and 4-7 from two bases and three multiples of the stride: address arithmetic
    // the compiler keeps in registers.
    const uint8_t* w0 = w + b * F::kW;
    const uint8_t* w4 = w0 + 4 * stride;
    auto row = [&](int r) { return (r < 4 ? w0 : w4) + static_cast<uint64_t>(r % 4) * stride; };
    prefetch_step<8 * F::kW>(w + 8 * stride, b);
    const __m256i a_lo = _mm256_broadcastsi128_si256(load128(ab + F::kAQs));
    const __m256i a_hi = _mm256_broadcastsi128_si256(load128(ab + F::kAQs + 16));
    __m256i a_off = _mm256_setzero_si256();
    if constexpr (F::kOffset != 0) {
      // (q - offset) . a = q . a - offset * a: 4 products per i16 lane stay far inside i16.
      a_off = _mm256_add_epi16(_mm256_maddubs_epi16(offset, a_lo), _mm256_maddubs_epi16(offset, a_hi));
    }
    __m256i sums[4];
    for (int i = 0; i < 4; ++i) {
      const WeightPair q = F::load(row(2 * i), row(2 * i + 1));
      __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(q.lo, a_lo), _mm256_maddubs_epi16(q.hi, a_hi));
      if constexpr (F::kOffset != 0) p = _mm256_sub_epi16(p, a_off);
      sums[i] = _mm256_madd_epi16(p, ones);
    }
    const __m256i isum = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]), _mm256_hadd_epi32(sums[2], sums[3]));
    uint16_t dy_half;
    std::memcpy(&dy_half, ab, 2);
    const __m256 dy = _mm256_set1_ps(fp16(dy_half));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(halves_pair_order(row, 0), dy), acc);
    if constexpr (F::kMin) {
      uint16_t s_half;
      std::memcpy(&s_half, ab + 2, 2);
      min_acc = _mm256_fmadd_ps(halves_pair_order(row, 2), _mm256_set1_ps(fp16(s_half)), min_acc);
    }
  }
  const __m256 sum = F::kMin ? _mm256_add_ps(acc, min_acc) : acc;
  _mm256_storeu_ps(y, _mm256_permutevar8x32_ps(sum, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// Q8_0 / IQ4_NL / MXFP4: full-range signed weights, one row per vector (|w| against a with w's
// sign); `scales` gives the eight rows' block scales.
struct Q8_0Rows {
  static constexpr uint64_t kW = sizeof(BlockQ8_0);
  static __m256i load(const uint8_t* b) { return load256(b + 2); }
  static __m256 scales(const uint8_t* w0, const uint8_t* w4, uint64_t stride) {
    return tile::gather_halves_strided(w0, w4, stride);
  }
};

// IQ4_NL, MXFP4 (C: codebook.h).
template <class C>
struct CodebookRows {
  static constexpr uint64_t kW = C::kBytes;
  static __m256i load(const uint8_t* b) { return codebook::block_values<C>(b); }
  static __m256 scales(const uint8_t* w0, const uint8_t* w4, uint64_t stride) {
    return codebook::scales_strided<C>(w0, w4, stride);
  }
};

// As eight_rows for the signed formats: each row's 8 i32 partial sums, three levels of vphaddd
// and one cross-lane add give the eight rows' block sums in row order.
template <class F>
void eight_rows_signed(int64_t nb, const uint8_t* w, uint64_t stride, const uint8_t* a, float* y) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* ab = a + b * sizeof(BlockQ8_0);
    const uint8_t* w0 = w + b * F::kW;
    const uint8_t* w4 = w0 + 4 * stride;
    auto row = [&](int r) { return (r < 4 ? w0 : w4) + static_cast<uint64_t>(r % 4) * stride; };
    prefetch_step<8 * F::kW>(w + 8 * stride, b);
    const __m256i av = load256(ab + 2);
    __m256i s[8];
    for (int r = 0; r < 8; ++r) {
      // Exact while a != -128 (the activation quantizers clamp to +-127).
      const __m256i q = F::load(row(r));
      s[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(av, q)), ones);
    }
    const __m256i q0 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
    const __m256i q1 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[4], s[5]), _mm256_hadd_epi32(s[6], s[7]));
    // q0 = rows 0-3 (lanes 0-3 of each row) | rows 0-3 (lanes 4-7); q1 the same for rows 4-7.
    const __m256i isum = _mm256_add_epi32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31));
    uint16_t dy_half;
    std::memcpy(&dy_half, ab, 2);
    const __m256 scale = _mm256_mul_ps(F::scales(w0, w4, stride), _mm256_set1_ps(fp16(dy_half)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc);
  }
  _mm256_storeu_ps(y, acc);
}

template <class F, VecDotFn kDot>
void signed_rows_by_eight(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                          uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const int64_t nb = n / 32;
  int64_t r0 = 0;
  for (; r0 + 8 <= n_rows; r0 += 8) {
    const uint8_t* wr = w + static_cast<uint64_t>(r0) * w_stride;
    for (int64_t t = 0; t < n_tokens; ++t) {
      eight_rows_signed<F>(nb, wr, w_stride, a + t * a_stride, y + t * y_stride + r0);
    }
  }
  for (; r0 < n_rows; ++r0) {
    for (int64_t t = 0; t < n_tokens; ++t) kDot(n, y + t * y_stride + r0, w + r0 * w_stride, a + t * a_stride);
  }
}

// Whole groups of eight rows here; the last few rows of a matrix go through vec_dot one by one.
template <class F, VecDotFn kDot>
void rows_by_eight(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                   int64_t n_tokens, float* y, int64_t y_stride) {
  const int64_t nb = n / 32;
  int64_t r0 = 0;
  for (; r0 + 8 <= n_rows; r0 += 8) {
    const uint8_t* wr = w + static_cast<uint64_t>(r0) * w_stride;
    for (int64_t t = 0; t < n_tokens; ++t) eight_rows<F>(nb, wr, w_stride, a + t * a_stride, y + t * y_stride + r0);
  }
  for (; r0 < n_rows; ++r0) {
    for (int64_t t = 0; t < n_tokens; ++t) kDot(n, y + t * y_stride + r0, w + r0 * w_stride, a + t * a_stride);
  }
}

// Each format's kernel: its row policy, and the vec_dot that takes a call's last n_rows % 8 rows.
template <DType W>
constexpr GemmFn kDecode8 = nullptr;
template <>
constexpr GemmFn kDecode8<DType::Q4_0> = rows_by_eight<Q4_0Rows, vec_dot<DType::Q4_0>>;
template <>
constexpr GemmFn kDecode8<DType::Q4_1> = rows_by_eight<Q4_1Rows, vec_dot<DType::Q4_1>>;
template <>
constexpr GemmFn kDecode8<DType::Q5_0> = rows_by_eight<Q5_0Rows, vec_dot<DType::Q5_0>>;
template <>
constexpr GemmFn kDecode8<DType::Q5_1> = rows_by_eight<Q5_1Rows, vec_dot<DType::Q5_1>>;
template <>
constexpr GemmFn kDecode8<DType::Q8_0> = signed_rows_by_eight<Q8_0Rows, vec_dot<DType::Q8_0>>;
template <>
constexpr GemmFn kDecode8<DType::IQ4_NL> = signed_rows_by_eight<CodebookRows<codebook::IQ4_NL>, vec_dot<DType::IQ4_NL>>;
template <>
constexpr GemmFn kDecode8<DType::MXFP4> = signed_rows_by_eight<CodebookRows<codebook::MXFP4>, vec_dot<DType::MXFP4>>;

}  // namespace

template <DType W>
void decode8(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
             int64_t n_tokens, float* y, int64_t y_stride) {
  kDecode8<W>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}
template GemmSig decode8<DType::Q4_0>;
template GemmSig decode8<DType::Q4_1>;
template GemmSig decode8<DType::Q5_0>;
template GemmSig decode8<DType::Q5_1>;
template GemmSig decode8<DType::Q8_0>;
template GemmSig decode8<DType::IQ4_NL>;
template GemmSig decode8<DType::MXFP4>;

}  // namespace ox::kernels::avx2
