// AVX2 tile kernels of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4):
// the panel layouts, how a chunk of blocks is packed into them, and the integer inner loops.
// Reference: quant_traits(W).vec_dot_ref per (row, token); integer block sums are exact, the
// float accumulation (one FMA per block) differs from the scalar order only by rounding.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/codebook.h"
#include "kernels/x86/avx2/gemm_decode.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using tile::bcast4;
using tile::load_aligned;

// Three ways to feed vpmaddubsw (u8 x s8, i16 pair sums that saturate at +-32767):
//  S  small signed weights (|w| <= 8 or 16) against activations biased to u8 (a + 128): the bias
//     adds 128 * sum(w) per row and block, a constant of the packed panel that is subtracted.
//  U  unsigned weights (0..15 / 0..31) against the signed activations as they are.
//  X  full-range signed weights: |w| against the activations carrying w's sign (vpsignb).
// KG = activation dwords whose i16 sums may be added before widening (no saturation).

constexpr int kTokens1 = 4, kTokens2 = 3;

// ---- S: Q4_0 (q - 8), Q5_0 (q - 16) against Q8_0.

struct PanelS {
  __m256i w[8];   // w[k] lane r: elements 4k..4k+3 of row r, as q - offset (low nibbles are k < 4)
  __m256i corr;   // 128 * sum of the block's 32 weights, per row
  __m256 d;       // row scales
};

template <int kChunk>
struct TokS {
  __m256i q[kChunk];  // activation quants + 128 as u8
  float d[kChunk];
};

template <int KG>
struct RunS {
  static constexpr int kChunk = 32, kTokens1 = avx2::kTokens1, kTokens2 = avx2::kTokens2;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_0);
  using Panel = PanelS;
  using Tok = TokS<kChunk>;
  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t b = 0; b < kc; ++b) {
      t->q[b] = _mm256_xor_si256(load256(act + b * sizeof(BlockQ8_0) + 2), bias);
    }
    tile::halves_to_floats(act, sizeof(BlockQ8_0), kc, t->d);
  }
  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const*, const Tok* const tok[], int64_t kc, __m256 acc[]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < kc; ++b) {
      __m256i isum[P * T];
      for (int g = 0; g < 8; g += KG) {
        __m256i part[P * T];
        for (int k = g; k < g + KG; ++k) {
          __m256i wk[P];
          for (int p = 0; p < P; ++p) wk[p] = load_aligned(&pb[p][b].w[k]);
          for (int t = 0; t < T; ++t) {
            const __m256i av = bcast4(reinterpret_cast<const uint8_t*>(&tok[t]->q[b]) + 4 * k);
            for (int p = 0; p < P; ++p) {
              const __m256i m = _mm256_maddubs_epi16(av, wk[p]);
              part[p * T + t] = k == g ? m : tile::chain(_mm256_add_epi16(part[p * T + t], m));
            }
          }
        }
        for (int i = 0; i < P * T; ++i) {
          const __m256i wide = _mm256_madd_epi16(part[i], ones);
          isum[i] = g == 0 ? wide : tile::chain(_mm256_add_epi32(isum[i], wide));
        }
      }
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 scale = _mm256_mul_ps(pb[p][b].d, _mm256_broadcast_ss(&tok[t]->d[b]));
          const __m256i i = _mm256_sub_epi32(isum[p * T + t], pb[p][b].corr);
          acc[p * T + t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i), scale, acc[p * T + t]);
        }
      }
    }
  }
};

struct Q4_0Format : RunS<8> {
  static constexpr int kBlockElems = kQK4_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_0);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    const __m256i eight = _mm256_set1_epi8(8);
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, 2, qs);
      pack::nibbles(qs, out[b].w);
      for (int k = 0; k < 8; ++k) out[b].w[k] = _mm256_sub_epi8(out[b].w[k], eight);
      out[b].corr = pack::bias_correction(out[b].w, 8);
      out[b].d = tile::gather_halves(blk, 0);
    }
  }
};

struct Q5_0Format : RunS<4> {
  static constexpr int kBlockElems = kQK5_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_0);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    const __m256i sixteen = _mm256_set1_epi8(16);
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qh[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, 2, qh);
      br.at(b, 6, qs);
      pack::q5_values(qh, qs, out[b].w);
      for (int k = 0; k < 8; ++k) out[b].w[k] = _mm256_sub_epi8(out[b].w[k], sixteen);
      out[b].corr = pack::bias_correction(out[b].w, 8);
      out[b].d = tile::gather_halves(blk, 0);
    }
  }
};

// ---- U: Q4_1, Q5_1 (q unsigned, x = d*q + m) against Q8_1 (s = dy * sum(a)).

struct PanelU {
  __m256i w[8];  // unsigned quants, same element order as PanelS
  __m256 d;
  __m256 m;
};

template <int kChunk>
struct TokU {
  float d[kChunk];
  float s[kChunk];
};

template <int KG>
struct RunU {
  static constexpr int kChunk = 32, kTokens1 = avx2::kTokens1, kTokens2 = avx2::kTokens2;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_1);
  using Panel = PanelU;
  using Tok = TokU<kChunk>;
  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    tile::halves_to_floats(act, sizeof(BlockQ8_1), kc, t->d);
    tile::halves_to_floats(act + 2, sizeof(BlockQ8_1), kc, t->s);
  }
  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const tok[], int64_t kc,
                  __m256 acc[]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < kc; ++b) {
      __m256i isum[P * T];
      for (int g = 0; g < 8; g += KG) {
        __m256i part[P * T];
        for (int k = g; k < g + KG; ++k) {
          __m256i wk[P];
          for (int p = 0; p < P; ++p) wk[p] = load_aligned(&pb[p][b].w[k]);
          for (int t = 0; t < T; ++t) {
            const __m256i av = bcast4(act[t] + b * sizeof(BlockQ8_1) + 4 + 4 * k);
            for (int p = 0; p < P; ++p) {
              const __m256i m = _mm256_maddubs_epi16(wk[p], av);
              part[p * T + t] = k == g ? m : tile::chain(_mm256_add_epi16(part[p * T + t], m));
            }
          }
        }
        for (int i = 0; i < P * T; ++i) {
          const __m256i wide = _mm256_madd_epi16(part[i], ones);
          isum[i] = g == 0 ? wide : tile::chain(_mm256_add_epi32(isum[i], wide));
        }
      }
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 scale = _mm256_mul_ps(pb[p][b].d, _mm256_broadcast_ss(&tok[t]->d[b]));
          __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[p * T + t]), scale, acc[p * T + t]);
          acc[p * T + t] = _mm256_fmadd_ps(pb[p][b].m, _mm256_broadcast_ss(&tok[t]->s[b]), v);
        }
      }
    }
  }
};

struct Q4_1Format : RunU<8> {
  static constexpr int kBlockElems = kQK4_1;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_1);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, 4, qs);
      pack::nibbles(qs, out[b].w);
      out[b].d = tile::gather_halves(blk, 0);
      out[b].m = tile::gather_halves(blk, 2);
    }
  }
};

struct Q5_1Format : RunU<4> {
  static constexpr int kBlockElems = kQK5_1;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_1);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qh[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, 4, qh);
      br.at(b, 8, qs);
      pack::q5_values(qh, qs, out[b].w);
      out[b].d = tile::gather_halves(blk, 0);
      out[b].m = tile::gather_halves(blk, 2);
    }
  }
};

// ---- X: Q8_0, IQ4_NL, MXFP4 (full-range signed weights) against Q8_0.

struct PanelX {
  __m256i abs_w[8];
  __m256i w[8];  // the signed weights, whose signs move onto the activations
  __m256 d;
};

template <int kChunk>
struct TokX {
  float d[kChunk];
};

struct RunX {
  // Twice the panel bytes of S / U per block: half the chunk keeps two panels within L1.
  static constexpr int kChunk = 16, kTokens1 = avx2::kTokens1, kTokens2 = avx2::kTokens2;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_0);
  using Panel = PanelX;
  using Tok = TokX<kChunk>;
  static void prep(Tok* t, const uint8_t* act, int64_t kc) { tile::halves_to_floats(act, sizeof(BlockQ8_0), kc, t->d); }
  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const tok[], int64_t kc,
                  __m256 acc[]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < kc; ++b) {
      __m256i isum[P * T];
      for (int k = 0; k < 8; ++k) {
        __m256i wa[P], ws[P];
        for (int p = 0; p < P; ++p) {
          wa[p] = load_aligned(&pb[p][b].abs_w[k]);
          ws[p] = load_aligned(&pb[p][b].w[k]);
        }
        for (int t = 0; t < T; ++t) {
          const __m256i av = bcast4(act[t] + b * sizeof(BlockQ8_0) + 2 + 4 * k);
          for (int p = 0; p < P; ++p) {
            // |w| * (a with w's sign): exact while a != -128 (the activation quantizers clamp to +-127).
            const __m256i prod = _mm256_maddubs_epi16(wa[p], _mm256_sign_epi8(av, ws[p]));
            const __m256i wide = _mm256_madd_epi16(prod, ones);
            isum[p * T + t] = k == 0 ? wide : tile::chain(_mm256_add_epi32(isum[p * T + t], wide));
          }
        }
      }
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 scale = _mm256_mul_ps(pb[p][b].d, _mm256_broadcast_ss(&tok[t]->d[b]));
          acc[p * T + t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[p * T + t]), scale, acc[p * T + t]);
        }
      }
    }
  }
};

struct Q8_0Format : RunX {
  static constexpr int kBlockElems = kQK8_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ8_0);
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, 2, qs);
      pack::bytes32(qs, out[b].w);
      for (int k = 0; k < 8; ++k) out[b].abs_w[k] = _mm256_abs_epi8(out[b].w[k]);
      out[b].d = tile::gather_halves(blk, 0);
    }
  }
};

// IQ4_NL, MXFP4: nibbles through a 16-entry codebook (C, codebook.h says where the block keeps
// them and its scale).
template <class C>
struct CodebookFormat : RunX {
  static constexpr int kBlockElems = 32;
  static constexpr uint64_t kWBlockBytes = C::kBytes;
  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    const pack::Rows br{rows, kWBlockBytes};
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t *blk[8], *qs[8];
      br.at(b, 0, blk);
      br.at(b, C::kQs, qs);
      codebook::values<C>(qs, out[b].w);
      for (int k = 0; k < 8; ++k) out[b].abs_w[k] = _mm256_abs_epi8(out[b].w[k]);
      out[b].d = codebook::scales<C>(blk);
    }
  }
};

// Below this many tokens packing a chunk costs more than it saves: `kDecode` (the eight-row decode
// kernels of gemm_decode.cpp, each token on its own) runs instead, or from 2 tokens on `kFew`
// (gemm_few_block32.cpp: each block unpacked once for all tokens) where the format has one.
constexpr int64_t kMinPanelTokens = 4;

template <class F, GemmFn kDecode, GemmFn kFew = nullptr>
void gemm_format(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride) {
  if constexpr (kFew != nullptr) {
    if (few_tokens::pay(n_tokens)) return kFew(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  if (n_tokens < kMinPanelTokens) return kDecode(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  tile::gemm_panels<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

// One format's slots: the tiles, the eight-row decode kernel, and the few-token kernel where it
// has one (which is also its gemm_few: the decode kernels' bits for any number of tokens).
template <DType W, class F, bool kHasFew>
void install(KernelTable& t) {
  const auto i = static_cast<uint32_t>(W);
  if constexpr (kHasFew) {
    t.gemm[i] = gemm_format<F, decode8<W>, gemm_few_block32<W>>;
    t.gemm_few[i] = gemm_few_block32<W>;
  } else {
    t.gemm[i] = gemm_format<F, decode8<W>>;
  }
}

}  // namespace

void register_gemm_block32(KernelTable& t) {
  install<DType::Q4_0, Q4_0Format, true>(t);
  install<DType::Q4_1, Q4_1Format, false>(t);
  install<DType::Q5_0, Q5_0Format, true>(t);
  install<DType::Q5_1, Q5_1Format, false>(t);
  install<DType::Q8_0, Q8_0Format, true>(t);
  install<DType::IQ4_NL, CodebookFormat<codebook::IQ4_NL>, true>(t);
  install<DType::MXFP4, CodebookFormat<codebook::MXFP4>, true>(t);
}

}  // namespace ox::kernels::avx2
