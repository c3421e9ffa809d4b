// AVX-512 VNNI few-token products of the signed 32-element block formats (Q4_0, Q5_0, Q8_0,
// IQ4_NL, MXFP4): 16 rows per group of the shared driver (avx2/gemm_few_block32.h), each block of the 16
// rows transposed in registers (lane r = row r) once for all tokens, then per token one vpdpbusd
// per 4 elements of the unsigned weights u = w + offset, started at -offset * sum(a): the exact
// block sum. Reference: vec_dot_ref; the bits are the eight-row decode kernels' (and the panels').
#include "kernels/x86/avx2/gemm_few_block32.h"

#include <cstddef>
#include <cstring>

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/codebook.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace few32 {  // (all AVX-512 sources share one translation unit in the emulated test)

constexpr int kRows = 16;

// 4x4 dword transposes within each 128-bit lane: out[j] lane L = dword j of lane L of in[0..3].
inline void transpose4x4_lanes(const __m512i in[4], __m512i out[4]) {
  const __m512i t0 = _mm512_unpacklo_epi32(in[0], in[1]), t1 = _mm512_unpackhi_epi32(in[0], in[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(in[2], in[3]), t3 = _mm512_unpackhi_epi32(in[2], in[3]);
  out[0] = _mm512_unpacklo_epi64(t0, t2);
  out[1] = _mm512_unpackhi_epi64(t0, t2);
  out[2] = _mm512_unpacklo_epi64(t1, t3);
  out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// 32 bytes of each of 16 rows: out[k] lane r = bytes 4k..4k+3 of src[r]. The loads pair rows
// i | i + 4 and 8 + i | 12 + i (256-bit halves), which the lane transposes and one 128-bit
// shuffle per output leave in row order.
inline void transpose16x8(const uint8_t* const src[kRows], __m512i out[8]) {
  __m512i z[8], u[8];
  for (int i = 0; i < 4; ++i) {
    z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(src[i])), load256(src[i + 4]), 1);
    z[4 + i] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(src[8 + i])), load256(src[12 + i]), 1);
  }
  transpose4x4_lanes(z, u);          // u[j]: lanes = dword j, j + 4 of rows 0-3; dword j, j + 4 of rows 4-7
  transpose4x4_lanes(z + 4, u + 4);  // the same for rows 8-11, 12-15
  for (int j = 0; j < 4; ++j) {
    out[j] = _mm512_shuffle_i64x2(u[j], u[4 + j], _MM_SHUFFLE(2, 0, 2, 0));
    out[4 + j] = _mm512_shuffle_i64x2(u[j], u[4 + j], _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// 16 bytes of packed nibbles per row (low nibbles = elements 0..15, high = 16..31): out[k] lane r
// = elements 4k..4k+3 of row r, 0..15. 128-bit lane L of load i holds row 4L + i.
inline void nibbles16(const uint8_t* const src[kRows], __m512i out[8]) {
  __m512i z[4], u[4];
  for (int i = 0; i < 4; ++i) {
    z[i] = _mm512_castsi128_si512(load128(src[i]));
    // The lane index is an immediate (clang insists on a constant expression, not an unrolled loop's).
    z[i] = _mm512_inserti32x4(z[i], load128(src[4 + i]), 1);
    z[i] = _mm512_inserti32x4(z[i], load128(src[8 + i]), 2);
    z[i] = _mm512_inserti32x4(z[i], load128(src[12 + i]), 3);
  }
  transpose4x4_lanes(z, u);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm512_and_si512(u[k], m4);
    out[4 + k] = _mm512_and_si512(_mm512_srli_epi16(u[k], 4), m4);
  }
}

// The u32 at `offset` into each of 16 blocks, lane r = block r's; pairs joined in general registers
// (as avx2::tile::gather_halves: sixteen 4-byte stores read back as one vector miss forwarding).
inline __m512i dwords16(const uint8_t* const blk[kRows], uint64_t offset) {
  int64_t q[8];
  for (int i = 0; i < 8; ++i) {
    uint32_t lo, hi;
    std::memcpy(&lo, blk[2 * i] + offset, 4);
    std::memcpy(&hi, blk[2 * i + 1] + offset, 4);
    q[i] = static_cast<int64_t>(lo | (static_cast<uint64_t>(hi) << 32));
  }
  return _mm512_set_epi64(q[7], q[6], q[5], q[4], q[3], q[2], q[1], q[0]);
}

// The 16-lane part of a format's policy for avx2::few32::rows_tokens; the formats add kBytes,
// kOffset and values(blk, Weights*): q[k] lane r = u of elements 4k..4k+3 of block blk[r], where
// u = w + kOffset is unsigned (vpdpbusd's first operand against the signed activations).
struct Lanes16 {
  static constexpr int kRows = few32::kRows;
  using Acc = __m512;
  struct Weights {
    __m512i q[8];
  };
  static __m512 d(const uint8_t* const blk[kRows]) { return tile::gather_halves16(blk, 0); }  // d leads a block
  static __m512 mul(__m512 d, float dy) { return _mm512_mul_ps(d, _mm512_set1_ps(dy)); }
  static __m512 zero() { return _mm512_setzero_ps(); }
  static __mmask16 mask(int rows) { return static_cast<__mmask16>((1u << rows) - 1); }
  static __m512 load(const float* y, int rows) { return _mm512_maskz_loadu_ps(mask(rows), y); }
  static void store(float* y, int rows, __m512 v) { _mm512_mask_storeu_ps(y, mask(rows), v); }
  static __m512 accumulate(const Weights& w, const uint8_t* q, int32_t neg_corr, __m512 d_dy, __m512 acc) {
    __m512i s = _mm512_set1_epi32(neg_corr);
    for (int k = 0; k < 8; ++k) s = _mm512_dpbusd_epi32(s, w.q[k], tile::bcast4(q + 4 * k));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d_dy, acc);
  }
};

struct Q4_0Few : Lanes16 {
  static constexpr uint64_t kBytes = sizeof(BlockQ4_0);
  static constexpr int kOffset = 8;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    __m512i* out = w->q;
    const uint8_t* qs[kRows];
    for (int r = 0; r < kRows; ++r) qs[r] = blk[r] + offsetof(BlockQ4_0, qs);
    nibbles16(qs, out);
  }
};

struct Q5_0Few : Lanes16 {
  static constexpr uint64_t kBytes = sizeof(BlockQ5_0);
  static constexpr int kOffset = 16;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    __m512i* out = w->q;
    const uint8_t* qs[kRows];
    for (int r = 0; r < kRows; ++r) qs[r] = blk[r] + offsetof(BlockQ5_0, qs);
    nibbles16(qs, out);
    // Bit e of qh is the 5th bit of element e: out[k] byte j wants bit 4k + j, which sits in byte
    // k / 2 of the lane's qh at bit 4 (k % 2) + j. Spread that byte over the dword, test the bits.
    const __m512i qh = dwords16(blk, offsetof(BlockQ5_0, qh));
    const __m512i sixteen = _mm512_set1_epi8(16);
    for (int h = 0; h < 4; ++h) {
      const __m512i spread = _mm512_shuffle_epi8(qh, spread_index(h));
      const __mmask64 lo = _mm512_test_epi8_mask(spread, _mm512_set1_epi32(0x08040201));
      const __mmask64 hi = _mm512_test_epi8_mask(spread, _mm512_set1_epi32(static_cast<int>(0x80402010u)));
      out[2 * h] = _mm512_mask_add_epi8(out[2 * h], lo, out[2 * h], sixteen);
      out[2 * h + 1] = _mm512_mask_add_epi8(out[2 * h + 1], hi, out[2 * h + 1], sixteen);
    }
  }
  // vpshufb index: every byte of dword m (of each 128-bit lane) takes byte 4m + h.
  static __m512i spread_index(int h) {
    return _mm512_broadcast_i32x4(
        _mm_setr_epi32(h * 0x01010101, (4 + h) * 0x01010101, (8 + h) * 0x01010101, (12 + h) * 0x01010101));
  }
};

struct Q8_0Few : Lanes16 {
  static constexpr uint64_t kBytes = sizeof(BlockQ8_0);
  static constexpr int kOffset = 128;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    __m512i* out = w->q;
    const uint8_t* qs[kRows];
    for (int r = 0; r < kRows; ++r) qs[r] = blk[r] + offsetof(BlockQ8_0, qs);
    transpose16x8(qs, out);
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));  // w ^ 0x80 = w + 128 as u8
    for (int k = 0; k < 8; ++k) out[k] = _mm512_xor_si512(out[k], bias);
  }
};

// IQ4_NL, MXFP4 (C: avx2/codebook.h): the codebook biased by 128 looks up u = w + 128 directly.
template <class C>
struct CodebookFew : Lanes16 {
  static constexpr uint64_t kBytes = C::kBytes;
  static constexpr int kOffset = 128;
  static void values(const uint8_t* const blk[kRows], Weights* w) {
    __m512i* out = w->q;
    const uint8_t* qs[kRows];
    for (int r = 0; r < kRows; ++r) qs[r] = blk[r] + C::kQs;
    nibbles16(qs, out);
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_xor_si128(load128(C::kValues), _mm_set1_epi8(static_cast<char>(0x80))));
    for (int k = 0; k < 8; ++k) out[k] = _mm512_shuffle_epi8(table, out[k]);
  }
  static __m512 d(const uint8_t* const blk[kRows]) {
    return tile::join(avx2::codebook::scales<C>(blk), avx2::codebook::scales<C>(blk + 8));
  }
};

// Each format's policy, and the AVX2 vec_dot of a call's last n_rows % 8 rows (as the decode kernels').
template <DType W>
constexpr GemmFn kFew = nullptr;
template <>
constexpr GemmFn kFew<DType::Q4_0> = avx2::few32::gemm<Q4_0Few, avx2::vec_dot<DType::Q4_0>>;
template <>
constexpr GemmFn kFew<DType::Q5_0> = avx2::few32::gemm<Q5_0Few, avx2::vec_dot<DType::Q5_0>>;
template <>
constexpr GemmFn kFew<DType::Q8_0> = avx2::few32::gemm<Q8_0Few, avx2::vec_dot<DType::Q8_0>>;
template <>
constexpr GemmFn kFew<DType::IQ4_NL> =
    avx2::few32::gemm<CodebookFew<avx2::codebook::IQ4_NL>, avx2::vec_dot<DType::IQ4_NL>>;
template <>
constexpr GemmFn kFew<DType::MXFP4> =
    avx2::few32::gemm<CodebookFew<avx2::codebook::MXFP4>, avx2::vec_dot<DType::MXFP4>>;

}  // namespace few32
}  // namespace

template <DType W>
void gemm_few_block32(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                      uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  few32::kFew<W>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}
template avx2::GemmSig gemm_few_block32<DType::Q4_0>;
template avx2::GemmSig gemm_few_block32<DType::Q5_0>;
template avx2::GemmSig gemm_few_block32<DType::Q8_0>;
template avx2::GemmSig gemm_few_block32<DType::IQ4_NL>;
template avx2::GemmSig gemm_few_block32<DType::MXFP4>;

}  // namespace ox::kernels::avx512
