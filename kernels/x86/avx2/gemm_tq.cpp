// AVX2 tile kernels of the ternary formats TQ1_0 and TQ2_0 against Q8_K (see gemm_tile.h for the
// panel scheme). Packing decodes each row's block once to its codes (tq_decode.h), unsigned bytes,
// reused by every token: vpmaddubsw of the codes against the activations as they are, i16 sums
// widened by vpmaddwd, sum(a) taken off from the bsums (the weights are code - 1). Reference:
// quant_traits(TQ1_0 / TQ2_0).vec_dot_ref and the vec_dot kernels (avx2/tq.cpp), bit for bit: each
// block's integer sum is exact, its float term (d * dy) * sum is formed and added to the cell's
// running sum in block order (kSumsInBlockOrder), so batched prefill and one-token decode agree.
#include <cstddef>  // offsetof

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/gemm_tile.h"
#include "kernels/x86/avx2/tq_decode.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

using tile::bcast4;
using tile::load_aligned;

struct PanelTQ {
  __m256i w[64];  // w[k] lane r: codes of elements 4k..4k+3 of row r (unsigned)
  __m256 d;       // fp16 d per row
};

template <int kChunk>
struct TokTQ {
  int32_t neg_sum[kChunk];  // -sum(a) of each block
};

// D: the block and its decoder (tq_decode.h); kGroupDwords: activation dwords whose i16 sums
// may be added before widening (each i16 then sums 2 kGroupDwords products of at most
// max code * 128: TQ1_0 64 * 2 * 2 * 128 = 2^15 at the extreme -128, which still fits i16 below
// zero (positive sums reach 64 * 4 * 127); TQ2_0 32 * 2 * 3 * 128 < 2^15).
template <class D, int kGroupDwords>
struct TQFormat {
  using B = typename D::Block;
  static constexpr int kBlockElems = kQK_K, kChunk = 4, kTokens1 = 6, kTokens2 = 3;
  static constexpr bool kSumsInBlockOrder = true;
  static constexpr uint64_t kWBlockBytes = sizeof(B), kABlockBytes = sizeof(BlockQ8_K);
  using Panel = PanelTQ;
  using Tok = TokTQ<kChunk>;

  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    for (int64_t b = 0; b < kc; ++b) {
      const BlockQ8_K& y = reinterpret_cast<const BlockQ8_K*>(act)[b];
      const __m256i sums = sum_pairs_i16(load256(y.bsums));
      t->neg_sum[b] = -hsum_i32(sums);
    }
  }

  static void pack(Panel* out, const uint8_t* const rows[8], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      __m256i codes[8][8];  // row r, elements 32j..32j+31
      const uint8_t* blk[8];
      for (int r = 0; r < 8; ++r) {
        blk[r] = rows[r] + static_cast<uint64_t>(sb) * kWBlockBytes;
        D::decode(*reinterpret_cast<const B*>(blk[r]), codes[r]);
      }
      Panel& o = out[sb];
      for (int j = 0; j < 8; ++j) {
        __m256i seg[8];
        for (int r = 0; r < 8; ++r) seg[r] = codes[r][j];
        tile::transpose8x8(seg, &o.w[8 * j]);
      }
      o.d = tile::gather_halves(blk, offsetof(B, d));
    }
  }

  template <int P, int T>
  static void run(const Panel* const pb[], const uint8_t* const act[], const Tok* const tok[], int64_t kc,
                  __m256 acc[]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t sb = 0; sb < kc; ++sb) {
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs);
      __m256i isum[P * T];
      for (int t = 0; t < T; ++t) {
        const __m256i neg_sum = _mm256_set1_epi32(tok[t]->neg_sum[sb]);
        for (int p = 0; p < P; ++p) isum[p * T + t] = neg_sum;
      }
      for (int k0 = 0; k0 < 64; k0 += kGroupDwords) {
        __m256i part[P * T];
        for (int i = 0; i < P * T; ++i) part[i] = _mm256_setzero_si256();
        for (int k = k0; k < k0 + kGroupDwords; ++k) {
          __m256i wk[P];
          for (int p = 0; p < P; ++p) wk[p] = load_aligned(&pb[p][sb].w[k]);
          for (int t = 0; t < T; ++t) {
            const __m256i av = bcast4(qs[t] + 4 * k);
            for (int p = 0; p < P; ++p) {
              part[p * T + t] = tile::chain(_mm256_add_epi16(part[p * T + t], _mm256_maddubs_epi16(wk[p], av)));
            }
          }
        }
        for (int i = 0; i < P * T; ++i) isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(part[i], ones));
      }
      // vec_dot's float steps: (d * dy) * sum, then added to the running sum (no fused multiply-add).
      for (int p = 0; p < P; ++p) {
        for (int t = 0; t < T; ++t) {
          const __m256 dy = _mm256_broadcast_ss(reinterpret_cast<const float*>(act[t] + sb * sizeof(BlockQ8_K)));
          const __m256 term = _mm256_mul_ps(_mm256_mul_ps(pb[p][sb].d, dy), _mm256_cvtepi32_ps(isum[p * T + t]));
          acc[p * T + t] = _mm256_add_ps(acc[p * T + t], term);
        }
      }
    }
  }
};

using TQ1_0Format = TQFormat<tq::TQ1_0Codes, 64>;
using TQ2_0Format = TQFormat<tq::TQ2_0Codes, 32>;

// From two tokens on a panel pays: decoding a block costs less than two dot products of it.
constexpr int64_t kMinPanelTokens = 2;

}  // namespace

void register_gemm_tq(KernelTable& t) {
  // Every token gets vec_dot's bits, as alone: the same kernels serve a step of single tokens.
  for (GemmFn* slot : {t.gemm, t.gemm_few}) {
    slot[static_cast<uint32_t>(DType::TQ1_0)] = tile::gemm_or_dots<TQ1_0Format, vec_dot<DType::TQ1_0>, kMinPanelTokens>;
    slot[static_cast<uint32_t>(DType::TQ2_0)] = tile::gemm_or_dots<TQ2_0Format, vec_dot<DType::TQ2_0>, kMinPanelTokens>;
  }
}

}  // namespace ox::kernels::avx2
