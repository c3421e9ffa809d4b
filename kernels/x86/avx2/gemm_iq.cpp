// AVX2 tile kernels of the codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M)
// against Q8_K (see gemm_tile.h for the panel scheme). Packing decodes each row's super-block once
// into signed bytes in the units of the reference's integer sum (grid * sign; 8 grid + delta for
// IQ1) and an integer multiplier per 16 elements, so every format shares one inner loop: weights
// against activations biased to u8 (a + 128), vpmaddubsw, vpmaddwd by the multipliers, minus the
// bias term of the panel. Reference: quant_traits(W).vec_dot_ref; integer sums exact, float order
// differs, the format's power-of-two factor folded into the row scale (exact).
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/iq_decode.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using tile::bcast4;
using tile::load_aligned;

struct PanelIQ {
  __m256i w[64];     // w[k] lane r: elements 4k..4k+3 of row r, signed
  __m256i mult[16];  // multiplier of elements 16g..16g+15 as i16 pairs, per row
  __m256i corr;      // 128 * sum_g mult_g * (sum of group g's weights), per row
  __m256 d;          // d * the format's factor, per row
};

template <int kChunk>
struct TokIQ {
  __m256i q[kChunk][8];  // activation quants + 128 as u8
};

template <class D>
struct IQFormat {
  static constexpr int kBlockElems = kQK_K, kChunk = 4, kTokens1 = 6, kTokens2 = 3;
  static constexpr int KG = D::kGroupDwords;
  static constexpr uint64_t kWBlockBytes = sizeof(typename D::Block), kABlockBytes = sizeof(BlockQ8_K);
  using Panel = PanelIQ;
  using Tok = TokIQ<kChunk>;

  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t b = 0; b < kc; ++b) {
      const uint8_t* qs = act + b * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs);
      for (int j = 0; j < 8; ++j) t->q[b][j] = _mm256_xor_si256(load256(qs + 32 * j), bias);
    }
  }

  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      alignas(32) int8_t w[8][kQK_K];
      int16_t mult[8][16];
      alignas(16) uint16_t d[8];
      for (int r = 0; r < 8; ++r) {
        const auto& block = reinterpret_cast<const typename D::Block*>(rows[r])[sb];
        d[r] = D::decode(block, w[r], mult[r]);
      }
      Panel& o = out[sb];
      for (int j = 0; j < 8; ++j) {
        const uint8_t* src[8];
        for (int r = 0; r < 8; ++r) src[r] = reinterpret_cast<const uint8_t*>(w[r] + 32 * j);
        pack::bytes32(src, &o.w[8 * j]);
      }
      // The multipliers as 8 rows of 32 bytes: dword k of row r = (mult 2k, mult 2k + 1); each
      // then repeated in both halves of its lane.
      const uint8_t* msrc[8];
      for (int r = 0; r < 8; ++r) msrc[r] = reinterpret_cast<const uint8_t*>(mult[r]);
      __m256i pairs[8];
      pack::bytes32(msrc, pairs);
      for (int k = 0; k < 8; ++k) {
        const __m256i lo = _mm256_and_si256(pairs[k], _mm256_set1_epi32(0xFFFF));
        const __m256i hi = _mm256_srli_epi32(pairs[k], 16);
        o.mult[2 * k] = _mm256_or_si256(lo, _mm256_slli_epi32(lo, 16));
        o.mult[2 * k + 1] = _mm256_or_si256(hi, _mm256_slli_epi32(hi, 16));
      }
      const __m256i ones8 = _mm256_set1_epi8(1);
      __m256i corr = _mm256_setzero_si256();
      for (int g = 0; g < 16; ++g) {
        __m256i s = _mm256_maddubs_epi16(ones8, o.w[4 * g]);  // i16: at most 8 * 62 per half lane
        for (int k = 4 * g + 1; k < 4 * g + 4; ++k) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(ones8, o.w[k]));
        corr = _mm256_add_epi32(corr, _mm256_madd_epi16(s, o.mult[g]));
      }
      o.corr = _mm256_slli_epi32(corr, 7);
      o.d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d))),
                          _mm256_set1_ps(D::kFactor));
    }
  }

  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const tok[], int64_t kc,
                  __m256 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      __m256i isum[P * T];
      for (int p = 0; p < P; ++p) {
        const __m256i neg_corr = _mm256_sub_epi32(_mm256_setzero_si256(), pb[p][sb].corr);
        for (int t = 0; t < T; ++t) isum[p * T + t] = neg_corr;
      }
      for (int k0 = 0; k0 < 64; k0 += KG) {
        __m256i part[P * T];
        for (int k = k0; k < k0 + KG; ++k) {
          __m256i wk[P];
          for (int p = 0; p < P; ++p) wk[p] = load_aligned(&pb[p][sb].w[k]);
          for (int t = 0; t < T; ++t) {
            const __m256i av = bcast4(reinterpret_cast<const uint8_t*>(tok[t]->q[sb]) + 4 * k);
            for (int p = 0; p < P; ++p) {
              const __m256i m = _mm256_maddubs_epi16(av, wk[p]);
              part[p * T + t] = k == k0 ? m : tile::chain(_mm256_add_epi16(part[p * T + t], m));
            }
          }
        }
        for (int p = 0; p < P; ++p) {
          const __m256i mult = load_aligned(&pb[p][sb].mult[k0 / 4]);
          for (int t = 0; t < T; ++t) {
            isum[p * T + t] = tile::chain(_mm256_add_epi32(isum[p * T + t], _mm256_madd_epi16(part[p * T + t], mult)));
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

// D: Block, kFactor (the reference's power-of-two factor), kGroupDwords (activation dwords whose
// i16 sums may be added, each i16 then summing 2 kGroupDwords products: 2 * kGroupDwords * 255 *
// max |w| <= 32767), decode (iq_decode.h).
template <typename B, uint16_t (*kDecode)(const B&, int8_t*, int16_t*), int kFactorInv, int kKG>
struct Decoder {
  using Block = B;
  static constexpr float kFactor = 1.0f / kFactorInv;
  static constexpr int kGroupDwords = kKG;
  static uint16_t decode(const B& b, int8_t* w, int16_t* mult) { return kDecode(b, w, mult); }
};

// Largest |w|: IQ2 43, IQ3_XXS 62 (one dword per i16 sum), IQ3_S 15, IQ1 9 (four).
using IQ2_XXSFormat = IQFormat<Decoder<BlockIQ2_XXS, iq2_xxs_decode, 8, 1>>;
using IQ2_XSFormat = IQFormat<Decoder<BlockIQ2_XS, iq2_xs_decode, 8, 1>>;
using IQ2_SFormat = IQFormat<Decoder<BlockIQ2_S, iq2_s_decode, 8, 1>>;
using IQ3_XXSFormat = IQFormat<Decoder<BlockIQ3_XXS, iq3_xxs_decode, 4, 1>>;
using IQ3_SFormat = IQFormat<Decoder<BlockIQ3_S, iq3_s_decode, 1, 4>>;
using IQ1_SFormat = IQFormat<Decoder<BlockIQ1_S, iq1_s_decode, 8, 4>>;
using IQ1_MFormat = IQFormat<Decoder<BlockIQ1_M, iq1_m_decode, 8, 4>>;

// From two tokens on a panel pays: decoding a block costs less than two dot products of it.
constexpr int64_t kMinPanelTokens = 2;

}  // namespace

void register_gemm_iq(KernelTable& t) {
  auto gemm = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  gemm(DType::IQ2_XXS, tile::gemm_or_dots<IQ2_XXSFormat, vec_dot<DType::IQ2_XXS>, kMinPanelTokens>);
  gemm(DType::IQ2_XS, tile::gemm_or_dots<IQ2_XSFormat, vec_dot<DType::IQ2_XS>, kMinPanelTokens>);
  gemm(DType::IQ2_S, tile::gemm_or_dots<IQ2_SFormat, vec_dot<DType::IQ2_S>, kMinPanelTokens>);
  gemm(DType::IQ3_XXS, tile::gemm_or_dots<IQ3_XXSFormat, vec_dot<DType::IQ3_XXS>, kMinPanelTokens>);
  gemm(DType::IQ3_S, tile::gemm_or_dots<IQ3_SFormat, vec_dot<DType::IQ3_S>, kMinPanelTokens>);
  gemm(DType::IQ1_S, tile::gemm_or_dots<IQ1_SFormat, vec_dot<DType::IQ1_S>, kMinPanelTokens>);
  gemm(DType::IQ1_M, tile::gemm_or_dots<IQ1_MFormat, vec_dot<DType::IQ1_M>, kMinPanelTokens>);
}

}  // namespace ox::kernels::avx2
