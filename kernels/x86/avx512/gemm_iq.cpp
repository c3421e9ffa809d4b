// AVX-512 VNNI tile kernels of the codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) against Q8_K: as the AVX2 ones (kernels/x86/avx2/gemm_iq.cpp, same block decoders) with
// 16-row panels; each 16-element group's dot is one vpdpbusd chain of the activations + 128 against
// the signed values (exact i32), times its multiplier with vpmulld, minus the panel's bias term.
// Reference: quant_traits(W).vec_dot_ref; integer sums exact, float order differs, the format's
// power-of-two factor folded into the row scale (exact).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/iq_util.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemmiq {  // (all AVX-512 sources share one translation unit in the emulated test)

using tile::bcast4;
using tile::join;

constexpr int kChunk = 2, kTokens = 8;

struct PanelIQ {
  __m512i w[64];     // w[k] lane r: elements 4k..4k+3 of row r, signed
  __m512i mult[16];  // multiplier of elements 16g..16g+15, i32 per row
  __m512i corr;      // 128 * sum_g mult_g * (sum of group g's values), per row
  __m512 d;          // d * the format's factor, per row
};

struct TokIQ {
  __m256i q[kChunk][8];  // activation quants + 128 as u8
};

// decode(const Block&, int8_t w[256], int16_t mult[16]) -> fp16 d (kernels/x86/avx2/iq_util.h);
// kGroup = elements per multiplier (16, or 32 where the format has one per sub-block: half the vpmulld).
template <typename B, uint16_t (*kDecode)(const B&, int8_t*, int16_t*), int kFactorInv, int kGroup>
struct IQFormat {
  static constexpr int kGroupDwords = kGroup / 4;
  using Panel = PanelIQ;
  using Tok = TokIQ;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmiq::kChunk, kTokens = gemmiq::kTokens;
  static constexpr uint64_t kWBlockBytes = sizeof(B), kABlockBytes = sizeof(BlockQ8_K);

  // Rows 8h..8h+7 of a decoded block: values transposed to panel order, and the bias term.
  static void pack_half(const int8_t (*w)[kQK_K], const int16_t (*mult)[16], __m256i q[64], __m256i* corr) {
    for (int j = 0; j < 8; ++j) {
      const uint8_t* src[8];
      for (int r = 0; r < 8; ++r) src[r] = reinterpret_cast<const uint8_t*>(w[r] + 32 * j);
      avx2::pack::bytes32(src, &q[8 * j]);
    }
    *corr = _mm256_setzero_si256();
    for (int g = 0; g < 16; ++g) {
      alignas(32) int32_t l[8];
      for (int r = 0; r < 8; ++r) l[r] = mult[r][g];
      const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(l));
      *corr = _mm256_add_epi32(*corr, _mm256_mullo_epi32(avx2::pack::bias_correction(q + 4 * g, 4), m));
    }
  }

  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      alignas(32) int8_t w[16][kQK_K];
      int16_t mult[16][16];
      alignas(32) uint16_t d[16];
      for (int r = 0; r < 16; ++r) d[r] = kDecode(reinterpret_cast<const B*>(rows[r])[sb], w[r], mult[r]);
      __m256i q[2][64], corr[2];
      for (int h = 0; h < 2; ++h) pack_half(w + 8 * h, mult + 8 * h, q[h], &corr[h]);
      Panel& o = out[sb];
      for (int k = 0; k < 64; ++k) o.w[k] = join(q[0][k], q[1][k]);
      o.corr = join(corr[0], corr[1]);
      for (int g = 0; g < 16; ++g) {
        alignas(64) int32_t l[16];
        for (int r = 0; r < 16; ++r) l[r] = mult[r][g];
        o.mult[g] = _mm512_load_si512(l);
      }
      const __m256 f = _mm256_set1_ps(1.0f / kFactorInv);
      o.d = join(_mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d))), f),
                 _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d + 8))), f));
    }
  }

  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t sb = 0; sb < kc; ++sb) {
      const uint8_t* qs = act + sb * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs);
      for (int i = 0; i < 8; ++i) t->q[sb][i] = _mm256_xor_si256(load256(qs + 32 * i), bias);
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
      for (int g = 0; g < 64 / kGroupDwords; ++g) {
        for (int t = 0; t < T; ++t) s[t] = _mm512_setzero_si512();
        for (int k = kGroupDwords * g; k < kGroupDwords * (g + 1); ++k) {
          const __m512i wk = _mm512_load_si512(&p.w[k]);
          for (int t = 0; t < T; ++t) s[t] = _mm512_dpbusd_epi32(s[t], bcast4(qs[t] + 4 * k), wk);
        }
        const __m512i mult = p.mult[g * kGroupDwords / 4];
        for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s[t], mult));
      }
      for (int t = 0; t < T; ++t) {
        float dy;
        std::memcpy(&dy, act[t] + sb * sizeof(BlockQ8_K), 4);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(p.d, _mm512_set1_ps(dy)), acc[t]);
      }
    }
  }
};

using IQ2_XXSFormat = IQFormat<BlockIQ2_XXS, avx2::iq2_xxs_decode, 8, 32>;
using IQ2_XSFormat = IQFormat<BlockIQ2_XS, avx2::iq2_xs_decode, 8, 16>;
using IQ2_SFormat = IQFormat<BlockIQ2_S, avx2::iq2_s_decode, 8, 16>;
using IQ3_XXSFormat = IQFormat<BlockIQ3_XXS, avx2::iq3_xxs_decode, 4, 32>;
using IQ3_SFormat = IQFormat<BlockIQ3_S, avx2::iq3_s_decode, 1, 32>;
using IQ1_SFormat = IQFormat<BlockIQ1_S, avx2::iq1_s_decode, 8, 32>;
using IQ1_MFormat = IQFormat<BlockIQ1_M, avx2::iq1_m_decode, 8, 16>;

}  // namespace gemmiq
}  // namespace

void gemm_iq2_xxs(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                  int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ2_XXSFormat, avx2::vec_dot_iq2_xxs_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens,
                                                                        y, y_stride);
}

void gemm_iq2_xs(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                 int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ2_XSFormat, avx2::vec_dot_iq2_xs_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y,
                                                                      y_stride);
}

void gemm_iq2_s(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ2_SFormat, avx2::vec_dot_iq2_s_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y,
                                                                    y_stride);
}

void gemm_iq3_xxs(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                  int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ3_XXSFormat, avx2::vec_dot_iq3_xxs_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens,
                                                                        y, y_stride);
}

void gemm_iq3_s(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ3_SFormat, avx2::vec_dot_iq3_s_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y,
                                                                    y_stride);
}

void gemm_iq1_s(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ1_SFormat, avx2::vec_dot_iq1_s_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y,
                                                                    y_stride);
}

void gemm_iq1_m(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
                int64_t n_tokens, float* y, int64_t y_stride) {
  tile::gemm_or_dots<gemmiq::IQ1_MFormat, avx2::vec_dot_iq1_m_q8_k>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y,
                                                                    y_stride);
}

}  // namespace ox::kernels::avx512
