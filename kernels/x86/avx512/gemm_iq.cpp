// AVX-512 VNNI tile kernels of the codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) against Q8_K: as the AVX2 ones (kernels/x86/avx2/gemm_iq.cpp, same block decoders) with
// 16-row panels; each group's dot is one vpdpbusd chain of the values + a bias (unsigned) against the
// activations (exact i32), times its multiplier with vpmulld; the bias term comes off via the bsums.
// Reference: quant_traits(W).vec_dot_ref; integer sums exact, float order differs, the format's
// power-of-two factor folded into the row scale (exact).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/iq_decode.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemmiq {  // (all AVX-512 sources share one translation unit in the emulated test)

using tile::bcast4;
using tile::join;

constexpr int kChunk = 2, kTokens = 8;
constexpr uint64_t kQs = offsetof(BlockQ8_K, qs), kBsums = offsetof(BlockQ8_K, bsums);

struct PanelIQ {
  __m512i w[64];     // w[k] lane r: elements 4k..4k+3 of row r, plus kBias (unsigned)
  __m512i mult[16];  // multiplier of elements 16g..16g+15, i32 per row
  __m512i bias[8];   // kBias * (multipliers of groups 2i, 2i + 1) as i16 pairs, per row
  __m512 d;          // d * the format's factor, per row
};

struct NoTok {};

// Unsigned weights w + kBias against the signed activations as they are (no per-token pass): per
// row and token, sum_g mult_g (sum (w + kBias) a)_g - kBias sum_g mult_g bsum_g, the second term
// from the Q8_K bsums (one per 16 elements) with vpdpwssd.
// decode(const Block&, int8_t w[256], int16_t mult[16]) -> fp16 d (kernels/x86/avx2/iq_util.h),
// |w| <= kBias <= 64; kGroup = elements per multiplier (16, or 32 where the format has one per
// sub-block: half the vpmulld).
template <typename B, uint16_t (*kDecode)(const B&, int8_t*, int16_t*), int kFactorInv, int kBias, int kGroup>
struct IQFormat {
  static constexpr int kGroupDwords = kGroup / 4;
  using Panel = PanelIQ;
  using Tok = NoTok;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmiq::kChunk, kTokens = gemmiq::kTokens;
  static constexpr uint64_t kWBlockBytes = sizeof(B), kABlockBytes = sizeof(BlockQ8_K);

  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    // The next chunk's blocks (past a row's end: the next row's start, already read) are fetched
    // while this one is multiplied: 16 row streams are more than the hardware prefetcher follows.
    for (int r = 0; r < 16; ++r) {
      const char* next = reinterpret_cast<const char*>(rows[r] + kChunk * kWBlockBytes);
      for (uint64_t off = 0; off < kChunk * kWBlockBytes; off += 64) _mm_prefetch(next + off, _MM_HINT_T0);
    }
    const __m512i bias8 = _mm512_set1_epi8(kBias);
    for (int64_t sb = 0; sb < kc; ++sb) {
      alignas(32) int8_t w[16][kQK_K];
      int16_t mult[16][16];
      alignas(32) uint16_t d[16];
      for (int r = 0; r < 16; ++r) d[r] = kDecode(reinterpret_cast<const B*>(rows[r])[sb], w[r], mult[r]);
      Panel& o = out[sb];
      for (int j = 0; j < 8; ++j) {
        __m512i q[8];
        tile::transpose16(w[0] + 32 * j, sizeof(w[0]), q);
        for (int k = 0; k < 8; ++k) o.w[8 * j + k] = _mm512_add_epi8(q[k], bias8);
      }
      // The multipliers as 16 rows of 32 bytes: dword k of row r = (mult 2k, mult 2k + 1).
      __m512i pairs[8];
      tile::transpose16(reinterpret_cast<const int8_t*>(mult[0]), sizeof(mult[0]), pairs);
      for (int k = 0; k < 8; ++k) {
        o.mult[2 * k] = _mm512_and_si512(pairs[k], _mm512_set1_epi32(0xFFFF));
        o.mult[2 * k + 1] = _mm512_srli_epi32(pairs[k], 16);
        o.bias[k] = _mm512_mullo_epi16(pairs[k], _mm512_set1_epi16(kBias));
      }
      const __m256 f = _mm256_set1_ps(1.0f / kFactorInv);
      o.d = join(_mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d))), f),
                 _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d + 8))), f));
    }
  }

  static void prep(Tok*, const uint8_t*, int64_t) {}

  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const*, int64_t kc, __m512 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const Panel& p = pb[sb];
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + kQs;
      __m512i corr[T], isum[T], s[T];
      for (int t = 0; t < T; ++t) corr[t] = _mm512_setzero_si512();
      for (int i = 0; i < 8; ++i) {
        for (int t = 0; t < T; ++t) {
          corr[t] = _mm512_dpwssd_epi32(corr[t], p.bias[i], bcast4(act[t] + sb * sizeof(BlockQ8_K) + kBsums + 4 * i));
        }
      }
      for (int t = 0; t < T; ++t) isum[t] = _mm512_sub_epi32(_mm512_setzero_si512(), corr[t]);
      for (int g = 0; g < 64 / kGroupDwords; ++g) {
        for (int t = 0; t < T; ++t) s[t] = _mm512_setzero_si512();
          // Unrolled: as a loop, GCC 12 copies every accumulator twice per iteration.
#pragma GCC unroll 8
        for (int j = 0; j < kGroupDwords; ++j) {
          const int k = kGroupDwords * g + j;
          const __m512i wk = _mm512_load_si512(&p.w[k]);
          for (int t = 0; t < T; ++t) s[t] = _mm512_dpbusd_epi32(s[t], wk, bcast4(qs[t] + 4 * k));
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

// Largest |w| (kBias): IQ2 43, IQ3_XXS 62, IQ3_S 15, IQ1 9.
using IQ2_XXSFormat = IQFormat<BlockIQ2_XXS, avx2::iq2_xxs_decode, 8, 43, 32>;
using IQ2_XSFormat = IQFormat<BlockIQ2_XS, avx2::iq2_xs_decode, 8, 43, 16>;
using IQ2_SFormat = IQFormat<BlockIQ2_S, avx2::iq2_s_decode, 8, 43, 16>;
using IQ3_XXSFormat = IQFormat<BlockIQ3_XXS, avx2::iq3_xxs_decode, 4, 62, 32>;
using IQ3_SFormat = IQFormat<BlockIQ3_S, avx2::iq3_s_decode, 1, 15, 32>;
using IQ1_SFormat = IQFormat<BlockIQ1_S, avx2::iq1_s_decode, 8, 9, 32>;
using IQ1_MFormat = IQFormat<BlockIQ1_M, avx2::iq1_m_decode, 8, 9, 16>;

// From two tokens on a panel pays: decoding a block costs less than two dot products of it.
constexpr int64_t kMinPanelTokens = 2;

}  // namespace gemmiq
}  // namespace

void register_gemm_iq(KernelTable& t) {
  using gemmiq::kMinPanelTokens;
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  gemm(DType::IQ2_XXS, tile::gemm_or_dots<gemmiq::IQ2_XXSFormat, avx2::vec_dot<DType::IQ2_XXS>, kMinPanelTokens>);
  gemm(DType::IQ2_XS, tile::gemm_or_dots<gemmiq::IQ2_XSFormat, avx2::vec_dot<DType::IQ2_XS>, kMinPanelTokens>);
  gemm(DType::IQ2_S, tile::gemm_or_dots<gemmiq::IQ2_SFormat, avx2::vec_dot<DType::IQ2_S>, kMinPanelTokens>);
  gemm(DType::IQ3_XXS, tile::gemm_or_dots<gemmiq::IQ3_XXSFormat, avx2::vec_dot<DType::IQ3_XXS>, kMinPanelTokens>);
  gemm(DType::IQ3_S, tile::gemm_or_dots<gemmiq::IQ3_SFormat, avx2::vec_dot<DType::IQ3_S>, kMinPanelTokens>);
  gemm(DType::IQ1_S, tile::gemm_or_dots<gemmiq::IQ1_SFormat, avx2::vec_dot<DType::IQ1_S>, kMinPanelTokens>);
  gemm(DType::IQ1_M, tile::gemm_or_dots<gemmiq::IQ1_MFormat, avx2::vec_dot<DType::IQ1_M>, kMinPanelTokens>);
}

}  // namespace ox::kernels::avx512
