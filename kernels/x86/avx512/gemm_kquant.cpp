// AVX-512 VNNI tile kernels of the K-quants and IQ4_XS against Q8_K: 16-row panels
// (gemm_tile.h); each sub-block's dot is one vpdpbusd chain (exact i32), scaled by its integer
// scale with vpmulld; the min / offset terms are vpdpwssd of scale pairs against Q8_K bsum pairs.
// Reference: quant_traits(W).vec_dot_ref; integer parts exact, float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemmk {  // (all AVX-512 sources share one translation unit in the emulated test)

using tile::bcast4;
using tile::join;

constexpr int kChunk = 2, kTokens = 8;

constexpr uint64_t kQs = offsetof(BlockQ8_K, qs), kBsums = offsetof(BlockQ8_K, bsums);

struct NoTok {};

// Lane r = v[r][j] (i32), or the i16 pair (v[r][2i], v[r][2i + 1]) / (v[r][j], v[r][j]).
template <typename V>
inline __m512i lanes_i32(const V v[16][16], int j) {
  alignas(64) int32_t l[16];
  for (int r = 0; r < 16; ++r) l[r] = v[r][j];
  return _mm512_load_si512(l);
}
template <typename V>
inline __m512i lanes_pair(const V v[16][16], int j0, int j1) {
  alignas(64) int32_t l[16];
  for (int r = 0; r < 16; ++r) {
    const uint32_t lo = static_cast<uint16_t>(static_cast<int16_t>(v[r][j0]));
    const uint32_t hi = static_cast<uint16_t>(static_cast<int16_t>(v[r][j1]));
    l[r] = static_cast<int32_t>(lo | (hi << 16));
  }
  return _mm512_load_si512(l);
}

// Both 8-row halves of a super-block loader joined: q[k] lane r = elements 4k.. of row r.
template <typename Block, typename Load>
inline void values16(const Block* const x[16], Load load, __m512i q[64]) {
  __m256i lo[64], hi[64];
  load(x, lo);
  load(x + 8, hi);
  for (int k = 0; k < 64; ++k) q[k] = join(lo[k], hi[k]);
}

template <typename Block>
inline void blocks16(const uint8_t* const rows[16], int64_t sb, const Block* x[16]) {
  for (int r = 0; r < 16; ++r) x[r] = reinterpret_cast<const Block*>(rows[r]) + sb;
}

template <typename Block>
inline __m512 halves16(const Block* const x[16], uint16_t Block::*field) {
  alignas(16) uint16_t h[16];
  for (int r = 0; r < 16; ++r) h[r] = x[r]->*field;
  return join(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))),
              _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h + 8))));
}

// s[t] = sum over activation dwords k0 .. k0 + n of weights . token t (exact, from zero).
template <int T>
inline void dot_chain(const __m512i* w, const uint8_t* const qs[], int k0, int n, __m512i s[]) {
  for (int t = 0; t < T; ++t) s[t] = _mm512_setzero_si512();
  for (int k = k0; k < k0 + n; ++k) {
    const __m512i wk = _mm512_load_si512(&w[k]);
    for (int t = 0; t < T; ++t) s[t] = _mm512_dpbusd_epi32(s[t], wk, bcast4(qs[t] + 4 * k));
  }
}

// out[t] = sum_i pair[i] . (bsums 2i, 2i + 1 of token t), i < 8.
template <int T>
inline void bsum_dot(const __m512i pair[8], const uint8_t* const act[], int64_t sb, __m512i out[]) {
  for (int t = 0; t < T; ++t) out[t] = _mm512_setzero_si512();
  for (int i = 0; i < 8; ++i) {
    for (int t = 0; t < T; ++t) {
      out[t] = _mm512_dpwssd_epi32(out[t], pair[i], bcast4(act[t] + sb * sizeof(BlockQ8_K) + kBsums + 4 * i));
    }
  }
}

inline __m512 dy_of(const uint8_t* act, int64_t sb) {
  float d;
  std::memcpy(&d, act + sb * sizeof(BlockQ8_K), 4);
  return _mm512_set1_ps(d);
}

// ---- Q4_K, Q5_K: 8 sub-blocks of 32, unsigned quants, 6-bit scales and mins.
struct PanelK8 {
  __m512i w[64];
  __m512i sc[8];  // i32
  __m512i mn[8];  // (m_j, m_j) pairs
  __m512 d, dmin;
};

struct RunK8 {
  using Panel = PanelK8;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmk::kChunk, kTokens = gemmk::kTokens;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_K);
  static void prep(Tok*, const uint8_t*, int64_t) {}
  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const*, int64_t kc, __m512 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const Panel& p = pb[sb];
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + kQs;
      __m512i isum[T], s[T], msum[T];
      for (int j = 0; j < 8; ++j) {
        dot_chain<T>(p.w, qs, 8 * j, 8, s);
        for (int t = 0; t < T; ++t) {
          const __m512i v = _mm512_mullo_epi32(s[t], p.sc[j]);
          isum[t] = j == 0 ? v : _mm512_add_epi32(isum[t], v);
        }
      }
      bsum_dot<T>(p.mn, act, sb, msum);
      for (int t = 0; t < T; ++t) {
        const __m512 dy = dy_of(act[t], sb);
        const __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(p.d, dy), acc[t]);
        acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[t]), _mm512_mul_ps(p.dmin, dy), v);
      }
    }
  }
};

template <typename Block>
inline void pack_k8_header(PanelK8* o, const Block* const x[16]) {
  uint8_t sc[16][16], mn[16][16];
  for (int r = 0; r < 16; ++r) {
    const avx2::KScales k = avx2::unpack_k4_scales(x[r]->scales);
    std::memcpy(&sc[r][0], k.scales, 8);
    std::memcpy(&mn[r][0], k.mins, 8);
  }
  for (int j = 0; j < 8; ++j) {
    o->sc[j] = lanes_i32(sc, j);
    o->mn[j] = lanes_pair(mn, j, j);
  }
  o->d = halves16(x, &Block::d);
  o->dmin = halves16(x, &Block::dmin);
}

struct Q4_KFormat : RunK8 {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_K);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ4_K* x[16];
      blocks16(rows, sb, x);
      pack_k8_header(&out[sb], x);
      values16(x, avx2::pack::q4_k_values, out[sb].w);
    }
  }
};

struct Q5_KFormat : RunK8 {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_K);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ5_K* x[16];
      blocks16(rows, sb, x);
      pack_k8_header(&out[sb], x);
      values16(x, avx2::pack::q5_k_values, out[sb].w);
    }
  }
};

// ---- Q6_K, Q3_K, Q2_K: 16 sub-blocks of 16.
struct PanelK16 {
  __m512i w[64];
  __m512i sc[16];   // i32
  __m512i pair[8];  // scales (Q6_K, Q3_K: the offset term) or mins (Q2_K) 2i, 2i + 1
  __m512 d, dmin;
};

// isum = sum_j sc_j * dot_j - (pair . bsums) << kShift; with kMin the pair sum is the min term.
template <int kShift, bool kMin>
struct RunK16 {
  using Panel = PanelK16;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmk::kChunk, kTokens = gemmk::kTokens;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_K);
  static void prep(Tok*, const uint8_t*, int64_t) {}
  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const*, int64_t kc, __m512 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const Panel& p = pb[sb];
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + kQs;
      __m512i isum[T], s[T], psum[T];
      bsum_dot<T>(p.pair, act, sb, psum);
      for (int t = 0; t < T; ++t) {
        isum[t] = kMin ? _mm512_setzero_si512() : _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(psum[t], kShift));
      }
      for (int j = 0; j < 16; ++j) {
        dot_chain<T>(p.w, qs, 4 * j, 4, s);
        for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s[t], p.sc[j]));
      }
      for (int t = 0; t < T; ++t) {
        const __m512 dy = dy_of(act[t], sb);
        __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(p.d, dy), acc[t]);
        if constexpr (kMin) v = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(psum[t]), _mm512_mul_ps(p.dmin, dy), v);
        acc[t] = v;
      }
    }
  }
};

template <typename V>
inline void k16_scales(PanelK16* o, const V sc[16][16], const V pair[16][16]) {
  for (int j = 0; j < 16; ++j) o->sc[j] = lanes_i32(sc, j);
  for (int i = 0; i < 8; ++i) o->pair[i] = lanes_pair(pair, 2 * i, 2 * i + 1);
}

struct Q6_KFormat : RunK16<5, false> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ6_K);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ6_K* x[16];
      blocks16(rows, sb, x);
      values16(x, avx2::pack::q6_k_values, out[sb].w);  // q in 0..63; the -32 goes through the bsums
      int8_t sc[16][16];
      for (int r = 0; r < 16; ++r) std::memcpy(sc[r], x[r]->scales, 16);
      k16_scales(&out[sb], sc, sc);
      out[sb].d = halves16(x, &BlockQ6_K::d);
    }
  }
};

struct Q3_KFormat : RunK16<2, false> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ3_K);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ3_K* x[16];
      blocks16(rows, sb, x);
      values16(x, avx2::pack::q3_k_values, out[sb].w);  // q + 4; the -4 goes through the bsums
      int8_t sc[16][16];
      for (int r = 0; r < 16; ++r) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(sc[r]), _mm_sub_epi8(avx2::q3_k_scales(x[r]->scales), _mm_set1_epi8(32)));
      }
      k16_scales(&out[sb], sc, sc);
      out[sb].d = halves16(x, &BlockQ3_K::d);
    }
  }
};

struct Q2_KFormat : RunK16<0, true> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ2_K);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ2_K* x[16];
      blocks16(rows, sb, x);
      values16(x, avx2::pack::q2_k_values, out[sb].w);
      uint8_t sc[16][16], mn[16][16];
      for (int r = 0; r < 16; ++r) {
        for (int i = 0; i < 16; ++i) {
          sc[r][i] = x[r]->scales[i] & 0xF;
          mn[r][i] = x[r]->scales[i] >> 4;
        }
      }
      k16_scales(&out[sb], sc, mn);
      out[sb].d = halves16(x, &BlockQ2_K::d);
      out[sb].dmin = halves16(x, &BlockQ2_K::dmin);
    }
  }
};

// ---- IQ4_XS: signed table values against activations + 128 (as gemm_block32.cpp's PanelS).
struct PanelIQ4XS {
  __m512i w[64];
  __m512i sc[8];  // ls - 32, i32
  __m512i corr;   // 128 * sum_j sc_j * (sum of sub-block j's values)
  __m512 d;
};

struct TokIQ4XS {
  __m256i q[kChunk][8];  // activation quants + 128
};

struct IQ4_XSFormat {
  using Panel = PanelIQ4XS;
  using Tok = TokIQ4XS;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmk::kChunk, kTokens = gemmk::kTokens;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockIQ4_XS), kABlockBytes = sizeof(BlockQ8_K);

  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockIQ4_XS* x[16];
      blocks16(rows, sb, x);
      int32_t sc[16][16];
      for (int r = 0; r < 16; ++r) {
        alignas(32) int32_t ls[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(ls), avx2::iq4_xs_scales(x[r]->scales_l, x[r]->scales_h));
        for (int j = 0; j < 8; ++j) sc[r][j] = ls[j];
      }
      __m256i q[2][64], corr[2];
      for (int h = 0; h < 2; ++h) {
        avx2::pack::iq4_xs_values(x + 8 * h, q[h]);
        corr[h] = _mm256_setzero_si256();
        for (int j = 0; j < 8; ++j) {
          alignas(32) int32_t l[8];
          for (int r = 0; r < 8; ++r) l[r] = sc[8 * h + r][j];
          const __m256i scj = _mm256_load_si256(reinterpret_cast<const __m256i*>(l));
          corr[h] = _mm256_add_epi32(corr[h], _mm256_mullo_epi32(avx2::pack::bias_correction(q[h] + 8 * j, 8), scj));
        }
      }
      for (int k = 0; k < 64; ++k) out[sb].w[k] = join(q[0][k], q[1][k]);
      out[sb].corr = join(corr[0], corr[1]);
      for (int j = 0; j < 8; ++j) out[sb].sc[j] = lanes_i32(sc, j);
      out[sb].d = halves16(x, &BlockIQ4_XS::d);
    }
  }

  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t sb = 0; sb < kc; ++sb) {
      for (int i = 0; i < 8; ++i) {
        t->q[sb][i] = _mm256_xor_si256(load256(act + sb * sizeof(BlockQ8_K) + kQs + 32 * i), bias);
      }
    }
  }

  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const tok[], int64_t kc, __m512 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const Panel& p = pb[sb];
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = reinterpret_cast<const uint8_t*>(tok[t]->q[sb]);
      __m512i isum[T], s[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_sub_epi32(_mm512_setzero_si512(), p.corr);
      for (int j = 0; j < 8; ++j) {
        // dot_chain's u8 x s8 with the roles swapped: activations + 128 unsigned, values signed.
        for (int t = 0; t < T; ++t) s[t] = _mm512_setzero_si512();
        for (int k = 8 * j; k < 8 * j + 8; ++k) {
          const __m512i wk = _mm512_load_si512(&p.w[k]);
          for (int t = 0; t < T; ++t) s[t] = _mm512_dpbusd_epi32(s[t], bcast4(qs[t] + 4 * k), wk);
        }
        for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s[t], p.sc[j]));
      }
      for (int t = 0; t < T; ++t) {
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(p.d, dy_of(act[t], sb)), acc[t]);
      }
    }
  }
};

// A format's gemm: its few-token kernel (kFew) where it has one and the step pays for it, else
// tiles or dots by row.
template <class F, VecDotFn kDot, GemmFn kFew = nullptr>
void gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
          int64_t n_tokens, float* y, int64_t y_stride) {
  if constexpr (kFew != nullptr) {
    if (few_tokens::pay(n_tokens)) return kFew(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  tile::gemm_or_dots<F, kDot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace gemmk
}  // namespace

void register_gemm_kquant(KernelTable& t) {
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  auto few = [&](DType type, GemmFn fn) { t.gemm_few[static_cast<uint32_t>(type)] = fn; };
  gemm(DType::Q2_K, gemmk::gemm<gemmk::Q2_KFormat, vec_dot<DType::Q2_K>>);
  gemm(DType::Q3_K, gemmk::gemm<gemmk::Q3_KFormat, vec_dot<DType::Q3_K>>);
  gemm(DType::Q4_K, gemmk::gemm<gemmk::Q4_KFormat, vec_dot<DType::Q4_K>, gemm_few_q4_k>);
  gemm(DType::Q5_K, gemmk::gemm<gemmk::Q5_KFormat, vec_dot<DType::Q5_K>>);
  gemm(DType::Q6_K, gemmk::gemm<gemmk::Q6_KFormat, vec_dot<DType::Q6_K>, gemm_few_q6_k>);
  gemm(DType::IQ4_XS, gemmk::gemm<gemmk::IQ4_XSFormat, vec_dot<DType::IQ4_XS>>);
  few(DType::Q4_K, gemm_few_q4_k);
  few(DType::Q6_K, gemm_few_q6_k);
}

}  // namespace ox::kernels::avx512
