// AVX-512 one-token product of Q4_K rows against one Q8_K row (a decode step), four rows at a time:
// the activations of each super-block are loaded and arranged once for the four rows, the four
// rows' scales and mins are unpacked together in one vector (a 128-bit lane per row), and the
// rows' integer sums are folded into one vector of 4 lanes per row before the float work, so the
// float scaling, the min term and the final horizontal sum are shared by four rows.
// Reference: quant_traits(Q4_K).vec_dot_ref; integer parts exact, float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemv4k {  // (all AVX-512 sources share one translation unit in the emulated test)

constexpr int kRows = 4;

// The same 16 bytes in each 128-bit lane.
inline __m512i lane_bytes(int8_t b0, int8_t b1, int8_t b2, int8_t b3, int8_t b4, int8_t b5, int8_t b6, int8_t b7,
                          int8_t b8, int8_t b9, int8_t b10, int8_t b11, int8_t b12, int8_t b13, int8_t b14,
                          int8_t b15) {
  return _mm512_broadcast_i32x4(_mm_setr_epi8(b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15));
}

// Control bytes of a vpshufb that makes 16-bit words of byte p in 128-bit lanes 0-1 and of byte q
// in lanes 2-3 (the scale words of one weight vector; see Constants::scale_words).
inline __m512i word_of_bytes(int8_t p, int8_t q) {
  const __m256i lo = _mm256_set1_epi16(static_cast<int16_t>(static_cast<uint8_t>(p) | 0x8000));
  const __m256i hi = _mm256_set1_epi16(static_cast<int16_t>(static_cast<uint8_t>(q) | 0x8000));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

struct Constants {
  // Scale unpacking, per 128-bit lane holding one row's block header (d, dmin, 12 scale bytes s):
  // out bytes 0-3 = sc0..3 = s[0..3] & 63,          4-7 = mn0..3 = s[4..7] & 63,
  //           8-11 = sc4..7 = s[8..11] & 15 | (s[0..3] >> 6) << 4,
  //          12-15 = mn4..7 = s[8..11] >> 4 | (s[4..7] >> 6) << 4     (core/quant's get_scale_min_k4).
  // Header byte 4 + k is s[k].
  __m512i pick_low = lane_bytes(4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 12, 13, 14, 15);
  __m512i pick_high = lane_bytes(-1, -1, -1, -1, -1, -1, -1, -1, 4, 5, 6, 7, 8, 9, 10, 11);
  __m512i mask_low = lane_bytes(63, 63, 63, 63, 63, 63, 63, 63, 15, 15, 15, 15, 0, 0, 0, 0);
  __m512i mask_nibble = lane_bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
  __m512i mask_high = lane_bytes(0, 0, 0, 0, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30);
  // Weight vector v of a super-block holds, as bytes 0-31 | 32-63, the nibbles of sub-blocks
  // (0 | 2), (1 | 3), (4 | 6), (5 | 7) (low / high nibbles of qs 0-63, then of qs 64-127); its
  // scale words come from the unpacked bytes sc0, sc2 / sc1, sc3 / sc4, sc6 / sc5, sc7.
  __m512i scale_words[4] = {word_of_bytes(0, 2), word_of_bytes(1, 3), word_of_bytes(8, 10), word_of_bytes(9, 11)};
  // The mins as 8 words per lane, for vpmaddwd against the 8 sub-block sums of the activations.
  __m512i min_words = lane_bytes(4, -1, 5, -1, 6, -1, 7, -1, 12, -1, 13, -1, 14, -1, 15, -1);
  // Words 0 (d) and 1 (dmin) of lane r, four times each: d of rows 0-3 in words 0-15, dmin in 16-31.
  __m512i d_dmin = _mm512_setr_epi32(0x00000000, 0x00000000, 0x00080008, 0x00080008, 0x00100010, 0x00100010,
                                     0x00180018, 0x00180018, 0x00010001, 0x00010001, 0x00090009, 0x00090009,
                                     0x00110011, 0x00110011, 0x00190019, 0x00190019);
  __m512i m4 = _mm512_set1_epi8(0x0F);
};

// Row r's block header (its first 16 bytes) in 128-bit lane r.
inline __m512i headers(const BlockQ4_K* const x[kRows], int64_t i) {
  __m512i h = _mm512_castsi128_si512(load128(&x[0][i]));
  h = _mm512_inserti32x4(h, load128(&x[1][i]), 1);
  h = _mm512_inserti32x4(h, load128(&x[2][i]), 2);
  return _mm512_inserti32x4(h, load128(&x[3][i]), 3);
}

inline __m512i unpack_scales(const Constants& c, __m512i h) {
  const __m512i lo = _mm512_shuffle_epi8(h, c.pick_low);
  const __m512i hi = _mm512_shuffle_epi8(h, c.pick_high);
  __m512i u = _mm512_and_si512(lo, c.mask_low);
  u = _mm512_ternarylogic_epi64(u, _mm512_srli_epi16(lo, 4), c.mask_nibble, 0xF8);  // u | (b & c)
  return _mm512_ternarylogic_epi64(u, _mm512_srli_epi16(hi, 2), c.mask_high, 0xF8);
}

// Lane sums of four rows' 16-lane vectors folded into one: lanes 4r..4r+3 add up to row r's total.
inline __m512i fold4(__m512i s0, __m512i s1, __m512i s2, __m512i s3) {
  const __m512i s01 = _mm512_add_epi32(_mm512_shuffle_i32x4(s0, s1, 0x88), _mm512_shuffle_i32x4(s0, s1, 0xDD));
  const __m512i s23 = _mm512_add_epi32(_mm512_shuffle_i32x4(s2, s3, 0x88), _mm512_shuffle_i32x4(s2, s3, 0xDD));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(s01, s23, 0x88), _mm512_shuffle_i32x4(s01, s23, 0xDD));
}

// y[r] = the sum of lanes 4r..4r+3 of acc, r < R.
template <int R>
inline void store_row_sums(__m512 acc, float* y) {
  const __m512 t = _mm512_add_ps(acc, _mm512_shuffle_ps(acc, acc, 0x4E));  // lanes (0+2, 1+3) of each group
  const __m512 u = _mm512_add_ps(t, _mm512_shuffle_ps(t, t, 0xB1));      // lane 4r: row r
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, u);
  for (int r = 0; r < R; ++r) y[r] = lanes[4 * r];
}

// Row r's integer sum, sum over sub-blocks j of sc_j * (q . a of j), spread over 16 lanes (zero
// for r >= R). `sc`: the unpacked scales (lane r = row r), `act`: the arranged activations.
template <int r, int R>
inline __m512i row_sum(const Constants& c, const uint8_t* qs, __m512i sc, const __m512i act[4]) {
  if constexpr (r >= R) return _mm512_setzero_si512();
  const __m512i sr = _mm512_shuffle_i32x4(sc, sc, r * 0x55);  // row r's lane in all four
  __m512i s = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i q = load512(qs + 64 * h);
    const __m512i w[2] = {_mm512_and_si512(q, c.m4), _mm512_and_si512(_mm512_srli_epi16(q, 4), c.m4)};
    for (int k = 0; k < 2; ++k) {
      const __m512i p = _mm512_maddubs_epi16(w[k], act[2 * h + k]);
      s = _mm512_dpwssd_epi32(s, p, _mm512_shuffle_epi8(sr, c.scale_words[2 * h + k]));
    }
  }
  return s;
}

// y[r] = Q4_K row x[r] . activations a, r < R (rows past R repeat row 0 and are not stored).
template <int R>
void rows_dot(const Constants& c, int64_t nb, const BlockQ4_K* const x[kRows], const BlockQ8_K* a, float* y) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // Activations in the weights' nibble order: v = [q 128h + 0..31 | 128h + 64..95] for the low
    // nibbles of qs 64h..64h+63, [128h + 32..63 | 128h + 96..127] for the high ones.
    __m512i act[4];
    for (int h = 0; h < 2; ++h) {
      const __m512i q0 = load512(a[i].qs + 128 * h), q1 = load512(a[i].qs + 128 * h + 64);
      act[2 * h] = _mm512_shuffle_i64x2(q0, q1, 0x44);
      act[2 * h + 1] = _mm512_shuffle_i64x2(q0, q1, 0xEE);
    }
    // The 8 sub-block sums of the activations (pairs of the 16-element bsums), words in each lane.
    const __m256i bs = load256(a[i].bsums);
    const __m512i pair_sums =
        _mm512_broadcast_i32x4(_mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));

    const __m512i hdr = headers(x, i);
    const __m512i sc = unpack_scales(c, hdr);
    const __m512i isum = fold4(row_sum<0, R>(c, x[0][i].qs, sc, act), row_sum<1, R>(c, x[1][i].qs, sc, act),
                               row_sum<2, R>(c, x[2][i].qs, sc, act), row_sum<3, R>(c, x[3][i].qs, sc, act));
    // Lane group r: row r's sum and min term (mins . sub-block sums, 4 partial lanes; vpdpwssd
    // from zero rather than vpmaddwd, which SIMDe 0.7.4's alias macro mangles in the emulated test).
    const __m512i imin = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(sc, c.min_words), pair_sums);
    const __m512i dh = _mm512_permutexvar_epi16(c.d_dmin, hdr);
    const __m512 dy = _mm512_set1_ps(a[i].d);
    const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(dh)), dy);
    const __m512 dmin = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(dh, 1)), dy);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), d, acc);
    acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(imin), dmin, acc);
  }
  store_row_sums<R>(acc, y);
}

// rows_dot over the rows in groups of four (a last group of R < 4 rows repeats its first row in the
// unused slots). Each group starts with a software prefetch of the whole next group in one burst:
// with four rows streaming at once, the hardware prefetcher alone streamed ~1.3x slower, and
// prefetches spread over the group's blocks (or to L2 only) were slower than the burst (2-core
// Zen 5 VM, 8192 x 2048 matrices streamed from memory). The prefetch may reach past the last row:
// prefetches never fault, and the rows after a call's are usually the next call's.
void row_groups(const Constants& c, int64_t nb, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                const BlockQ8_K* a, float* y) {
  const auto row = [&](int64_t r) { return reinterpret_cast<const BlockQ4_K*>(w + static_cast<uint64_t>(r) * w_stride); };
  const uint64_t group_bytes = kRows * w_stride;
  int64_t r0 = 0;
  for (; r0 + kRows <= n_rows; r0 += kRows) {
    const char* next = reinterpret_cast<const char*>(row(r0 + kRows));
    for (uint64_t off = 0; off < group_bytes; off += 64) _mm_prefetch(next + off, _MM_HINT_T0);
    const BlockQ4_K* x[kRows] = {row(r0), row(r0 + 1), row(r0 + 2), row(r0 + 3)};
    rows_dot<4>(c, nb, x, a, y + r0);
  }
  const int64_t left = n_rows - r0;
  if (left == 0) return;
  const BlockQ4_K* x[kRows] = {row(r0), row(r0), row(r0), row(r0)};
  for (int64_t r = 1; r < left; ++r) x[r] = row(r0 + r);
  switch (left) {
    case 1: rows_dot<1>(c, nb, x, a, y + r0); break;
    case 2: rows_dot<2>(c, nb, x, a, y + r0); break;
    default: rows_dot<3>(c, nb, x, a, y + r0); break;
  }
}

}  // namespace gemv4k
}  // namespace

void gemv_q4_k(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, float* y) {
  static const gemv4k::Constants c;
  gemv4k::row_groups(c, n / kQK_K, w, w_stride, n_rows, reinterpret_cast<const BlockQ8_K*>(a), y);
}

}  // namespace ox::kernels::avx512
