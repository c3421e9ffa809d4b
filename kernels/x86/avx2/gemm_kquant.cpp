// AVX2 tile kernels of the K-quants and IQ4_XS against Q8_K (see gemm_tile.h for the panel
// scheme). Per super-block and (row, token) the sub-block dots are scaled by their integer
// scales in i32, then one float FMA with d * dy; the min / offset terms come from the Q8_K bsums.
// Reference: quant_traits(W).vec_dot_ref; integer parts exact, float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using tile::bcast4;
using tile::load_aligned;

constexpr uint64_t kQsOffset = offsetof(BlockQ8_K, qs);
constexpr uint64_t kBsumsOffset = offsetof(BlockQ8_K, bsums);

// i16 pair sums of weights (u8, panel vector k) against the activation dword k of each token,
// added over k in [k0, k0 + n): the caller keeps n small enough for i16.
template <int P, int T>
inline void dot_group(const __m256i* const w[], const uint8_t* const qs[], int k0, int n, __m256i part[]) {
  for (int k = k0; k < k0 + n; ++k) {
    __m256i wk[P];
    for (int p = 0; p < P; ++p) wk[p] = load_aligned(&w[p][k]);
    for (int t = 0; t < T; ++t) {
      const __m256i av = bcast4(qs[t] + 4 * k);
      for (int p = 0; p < P; ++p) {
        const __m256i m = _mm256_maddubs_epi16(wk[p], av);
        part[p * T + t] = k == k0 ? m : tile::chain(_mm256_add_epi16(part[p * T + t], m));
      }
    }
  }
}

// sum_i scale[i] * (bsum pair i of the token), i < 8: scales as i16 pairs per lane, bsums 2i, 2i+1.
template <int P, int T>
inline void bsum_dot(const __m256i* const scales[], const uint8_t* const act[], int64_t sb, __m256i out[]) {
  for (int i = 0; i < 8; ++i) {
    for (int t = 0; t < T; ++t) {
      const __m256i bv = bcast4(act[t] + sb * sizeof(BlockQ8_K) + kBsumsOffset + 4 * i);
      for (int p = 0; p < P; ++p) {
        const __m256i m = _mm256_madd_epi16(load_aligned(&scales[p][i]), bv);
        out[p * T + t] = i == 0 ? m : tile::chain(_mm256_add_epi32(out[p * T + t], m));
      }
    }
  }
}

// ---- Q4_K / Q5_K: 8 sub-blocks of 32, 6-bit scales and mins.

struct PanelK4 {
  __m256i w[64];  // w[k] lane r: elements 4k..4k+3 of row r, unsigned (0..15 / 0..31)
  __m256i sc[8];  // sub-block scales as i16 pairs
  __m256i mn[8];  // sub-block mins as i16 pairs
  __m256 d, dmin;
};

struct NoTok {};

// KG = activation dwords summed in i16 (8: 16 products of 15 * 128; 4: 8 of 31 * 128).
template <int KG>
struct RunK4 {
  using Panel = PanelK4;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = 4, kTokens1 = 4, kTokens2 = 2;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_K);
  static void prep(Tok*, const uint8_t*, int64_t) {}
  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const*, int64_t kc, __m256 acc[]) {
    const __m256i* w[P];
    const __m256i* mn[P];
    for (int64_t sb = 0; sb < kc; ++sb) {
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + kQsOffset;
      for (int p = 0; p < P; ++p) {
        w[p] = pb[p][sb].w;
        mn[p] = pb[p][sb].mn;
      }
      __m256i isum[P * T];
      for (int i = 0; i < P * T; ++i) isum[i] = _mm256_setzero_si256();
      for (int j = 0; j < 8; ++j) {
        for (int g = 0; g < 8; g += KG) {
          __m256i part[P * T];
          dot_group<P, T>(w, qs, 8 * j + g, KG, part);
          for (int p = 0; p < P; ++p) {
            for (int t = 0; t < T; ++t) {
              const __m256i s = _mm256_madd_epi16(part[p * T + t], load_aligned(&pb[p][sb].sc[j]));
              isum[p * T + t] = tile::chain(_mm256_add_epi32(isum[p * T + t], s));
            }
          }
        }
      }
      __m256i msum[P * T];
      bsum_dot<P, T>(mn, act, sb, msum);
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 dy = _mm256_broadcast_ss(reinterpret_cast<const float*>(act[t] + sb * sizeof(BlockQ8_K)));
          __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[p * T + t]), _mm256_mul_ps(pb[p][sb].d, dy),
                                     acc[p * T + t]);
          acc[p * T + t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[p * T + t]), _mm256_mul_ps(pb[p][sb].dmin, dy), v);
        }
      }
    }
  }
};

// Scales, mins and the two fp16 multipliers of 8 rows' Q4_K / Q5_K super-blocks.
template <typename Block>
inline void pack_k4_header(PanelK4* out, const Block* const x[8]) {
  uint8_t sc[8][16], mn[8][16];
  alignas(16) uint16_t d[8], dmin[8];
  for (int r = 0; r < 8; ++r) {
    const KScales k = unpack_k4_scales(x[r]->scales);
    std::memcpy(&sc[r][0], k.scales, 8);
    std::memcpy(&mn[r][0], k.mins, 8);
    d[r] = x[r]->d;
    dmin[r] = x[r]->dmin;
  }
  pack::lane_pairs(sc, 8, out->sc);
  pack::lane_pairs(mn, 8, out->mn);
  out->d = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
  out->dmin = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dmin)));
}

struct Q4_KFormat : RunK4<8> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_K);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ4_K* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockQ4_K*>(rows[r]) + sb;
      pack_k4_header(&out[sb], x);
      pack::q4_k_values(x, out[sb].w);
    }
  }
};

struct Q5_KFormat : RunK4<4> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_K);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ5_K* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockQ5_K*>(rows[r]) + sb;
      pack_k4_header(&out[sb], x);
      pack::q5_k_values(x, out[sb].w);
    }
  }
};

// ---- Q6_K, Q3_K, Q2_K: 16 sub-blocks of 16 with their own scales.

struct Panel16 {
  __m256i w[64];    // unsigned quants, element order
  __m256i sc[16];   // scale i as i16 pairs
  __m256i pair[8];  // scales (Q6_K, Q3_K) or mins (Q2_K) 2i, 2i+1 as the two i16 halves
  __m256 d, dmin;
};

// Per super-block: isum = sum_i sc_i * (q . a)_i - (sum_i pair_i * bsum_i) << kShift, then
// d * dy * isum; with kMin the pair sum is the min term instead, times dmin * dy.
// KG = activation dwords per i16 sum (2 for 0..63: 4 products of 63 * 128; 4 for 0..7 / 0..3).
template <int KG, int kShift, bool kMin>
struct RunK16 {
  using Panel = Panel16;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = 4, kTokens1 = 4, kTokens2 = 2;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_K);
  static void prep(Tok*, const uint8_t*, int64_t) {}

  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const*, int64_t kc, __m256 acc[]) {
    const __m256i* w[P];
    const __m256i* pairs[P];
    for (int64_t sb = 0; sb < kc; ++sb) {
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + kQsOffset;
      for (int p = 0; p < P; ++p) {
        w[p] = pb[p][sb].w;
        pairs[p] = pb[p][sb].pair;
      }
      __m256i isum[P * T], psum[P * T];
      bsum_dot<P, T>(pairs, act, sb, psum);
      for (int i = 0; i < P * T; ++i) {
        isum[i] = kMin ? _mm256_setzero_si256() : _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(psum[i], kShift));
      }
      for (int j = 0; j < 16; ++j) {
        for (int g = 0; g < 4; g += KG) {
          __m256i part[P * T];
          dot_group<P, T>(w, qs, 4 * j + g, KG, part);
          for (int p = 0; p < P; ++p) {
            for (int t = 0; t < T; ++t) {
              const __m256i s = _mm256_madd_epi16(part[p * T + t], load_aligned(&pb[p][sb].sc[j]));
              isum[p * T + t] = tile::chain(_mm256_add_epi32(isum[p * T + t], s));
            }
          }
        }
      }
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 dy = _mm256_broadcast_ss(reinterpret_cast<const float*>(act[t] + sb * sizeof(BlockQ8_K)));
          __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[p * T + t]), _mm256_mul_ps(pb[p][sb].d, dy), acc[p * T + t]);
          if constexpr (kMin) v = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(psum[p * T + t]), _mm256_mul_ps(pb[p][sb].dmin, dy), v);
          acc[p * T + t] = v;
        }
      }
    }
  }
};

inline __m256 halves8(const uint16_t h[8]) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))); }

struct Q6_KFormat : RunK16<2, 5, false> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ6_K);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ6_K* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockQ6_K*>(rows[r]) + sb;
      Panel& o = out[sb];
      pack::q6_k_values(x, o.w);
      int8_t sc[8][16];
      uint16_t d[8];
      for (int r = 0; r < 8; ++r) {
        std::memcpy(sc[r], x[r]->scales, 16);
        d[r] = x[r]->d;
      }
      pack::lane_pairs(sc, 16, o.sc);
      pack::lane_pair_halves(sc, o.pair);
      o.d = halves8(d);
    }
  }
};

struct Q3_KFormat : RunK16<4, 2, false> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ3_K);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ3_K* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockQ3_K*>(rows[r]) + sb;
      Panel& o = out[sb];
      pack::q3_k_values(x, o.w);  // q + 4: the -4 comes off through the bsums
      int8_t sc[8][16];
      uint16_t d[8];
      for (int r = 0; r < 8; ++r) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(sc[r]), _mm_sub_epi8(q3_k_scales(x[r]->scales), _mm_set1_epi8(32)));
        d[r] = x[r]->d;
      }
      pack::lane_pairs(sc, 16, o.sc);
      pack::lane_pair_halves(sc, o.pair);
      o.d = halves8(d);
    }
  }
};

struct Q2_KFormat : RunK16<4, 0, true> {
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ2_K);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockQ2_K* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockQ2_K*>(rows[r]) + sb;
      Panel& o = out[sb];
      pack::q2_k_values(x, o.w);
      uint8_t sc[8][16], mn[8][16];
      uint16_t d[8], dmin[8];
      for (int r = 0; r < 8; ++r) {
        for (int i = 0; i < 16; ++i) {
          sc[r][i] = x[r]->scales[i] & 0xF;
          mn[r][i] = x[r]->scales[i] >> 4;
        }
        d[r] = x[r]->d;
        dmin[r] = x[r]->dmin;
      }
      pack::lane_pairs(sc, 16, o.sc);
      pack::lane_pair_halves(mn, o.pair);
      o.d = halves8(d);
      o.dmin = halves8(dmin);
    }
  }
};

// ---- IQ4_XS: 8 sub-blocks of 32, non-linear 4-bit values, 6-bit scales (bias 32).

struct PanelIQ4XS {
  __m256i abs_w[64];
  __m256i w[64];  // signed table values, element order
  __m256i sc[8];  // ls - 32 as i16 pairs
  __m256 d;
};

struct IQ4_XSFormat {
  using Panel = PanelIQ4XS;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = 2, kTokens1 = 4, kTokens2 = 2;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockIQ4_XS), kABlockBytes = sizeof(BlockQ8_K);
  static void prep(Tok*, const uint8_t*, int64_t) {}

  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const BlockIQ4_XS* x[8];
      for (int r = 0; r < 8; ++r) x[r] = reinterpret_cast<const BlockIQ4_XS*>(rows[r]) + sb;
      Panel& o = out[sb];
      pack::iq4_xs_values(x, o.w);
      for (int k = 0; k < 64; ++k) o.abs_w[k] = _mm256_abs_epi8(o.w[k]);
      int16_t sc[8][16];
      uint16_t d[8];
      for (int r = 0; r < 8; ++r) {
        alignas(32) int32_t ls[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(ls), iq4_xs_scales(x[r]->scales_l, x[r]->scales_h));
        for (int ib = 0; ib < 8; ++ib) sc[r][ib] = static_cast<int16_t>(ls[ib]);
        d[r] = x[r]->d;
      }
      pack::lane_pairs(sc, 8, o.sc);
      o.d = halves8(d);
    }
  }

  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const*, int64_t kc, __m256 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      __m256i isum[P * T];
      for (int k = 0; k < 64; ++k) {
        __m256i wa[P], ws[P], sc[P];
        for (int p = 0; p < P; ++p) {
          wa[p] = load_aligned(&pb[p][sb].abs_w[k]);
          ws[p] = load_aligned(&pb[p][sb].w[k]);
          sc[p] = load_aligned(&pb[p][sb].sc[k / 8]);
        }
        for (int t = 0; t < T; ++t) {
          const __m256i av = bcast4(act[t] + sb * sizeof(BlockQ8_K) + kQsOffset + 4 * k);
          for (int p = 0; p < P; ++p) {
            // |w| * (a with w's sign), exact while a != -128; pair sums times the sub-block scale.
            const __m256i prod = _mm256_maddubs_epi16(wa[p], _mm256_sign_epi8(av, ws[p]));
            const __m256i s = _mm256_madd_epi16(prod, sc[p]);
            isum[p * T + t] = k == 0 ? s : tile::chain(_mm256_add_epi32(isum[p * T + t], s));
          }
        }
      }
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 dy = _mm256_broadcast_ss(reinterpret_cast<const float*>(act[t] + sb * sizeof(BlockQ8_K)));
          acc[p * T + t] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[p * T + t]), _mm256_mul_ps(pb[p][sb].d, dy), acc[p * T + t]);
        }
      }
    }
  }
};

// A format's gemm: its few-token kernel (kFew) where it has one and the step pays for it, else
// tiles or dots by row.
template <class F, VecDotFn kDot, GemmFn kFew = nullptr>
void gemm_format(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride) {
  if constexpr (kFew != nullptr) {
    if (few_tokens::pay(n_tokens)) return kFew(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  tile::gemm_or_dots<F, kDot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

}  // namespace

void register_gemm_kquant(KernelTable& t) {
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  auto few = [&](DType type, GemmFn fn) { t.gemm_few[static_cast<uint32_t>(type)] = fn; };
  gemm(DType::Q2_K, gemm_format<Q2_KFormat, vec_dot<DType::Q2_K>>);
  gemm(DType::Q3_K, gemm_format<Q3_KFormat, vec_dot<DType::Q3_K>>);
  gemm(DType::Q4_K, gemm_format<Q4_KFormat, vec_dot<DType::Q4_K>, gemm_few_q4_k>);
  gemm(DType::Q5_K, gemm_format<Q5_KFormat, vec_dot<DType::Q5_K>>);
  gemm(DType::Q6_K, gemm_format<Q6_KFormat, vec_dot<DType::Q6_K>, gemm_few_q6_k>);
  gemm(DType::IQ4_XS, gemm_format<IQ4_XSFormat, vec_dot<DType::IQ4_XS>>);
  few(DType::Q4_K, gemm_few_q4_k);
  few(DType::Q6_K, gemm_few_q6_k);
}

}  // namespace ox::kernels::avx2
