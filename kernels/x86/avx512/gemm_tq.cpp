// AVX-512 VNNI tile kernels of the ternary formats TQ1_0 and TQ2_0 against Q8_K: as the AVX2 ones
// (kernels/x86/avx2/gemm_tq.cpp, same block decoders) with 16-row panels; each block's dot is one
// vpdpbusd chain of the unsigned codes against the activations as they are (exact i32), starting
// from -sum(a) (the weights are code - 1). Reference: quant_traits(TQ1_0 / TQ2_0).vec_dot_ref and
// the vec_dot kernels, bit for bit: exact block sums, (d * dy) * sum added in block order.
#include <cstddef>  // offsetof

#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/tq_decode.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemmtq {  // (all AVX-512 sources share one translation unit in the emulated test)

using tile::bcast4;

constexpr int kChunk = 2, kTokens = 8;

struct PanelTQ {
  __m512i w[64];  // w[k] lane r: codes of elements 4k..4k+3 of row r (unsigned)
  __m512 d;       // fp16 d per row
};

struct TokTQ {
  int32_t neg_sum[kChunk];  // -sum(a) of each block
};

// D: the block and its decoder (kernels/x86/avx2/tq_decode.h).
template <class D>
struct TQFormat {
  using B = typename D::Block;
  using Panel = PanelTQ;
  using Tok = TokTQ;
  static constexpr int kBlockElems = kQK_K, kChunk = gemmtq::kChunk, kTokens = gemmtq::kTokens;
  static constexpr bool kSumsInBlockOrder = true;
  static constexpr uint64_t kWBlockBytes = sizeof(B), kABlockBytes = sizeof(BlockQ8_K);

  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      alignas(32) uint8_t codes[16][kQK_K];
      const uint8_t* blk[16];
      for (int r = 0; r < 16; ++r) {
        blk[r] = rows[r] + static_cast<uint64_t>(sb) * kWBlockBytes;
        __m256i c[8];
        D::decode(*reinterpret_cast<const B*>(blk[r]), c);
        for (int j = 0; j < 8; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(codes[r] + 32 * j), c[j]);
      }
      Panel& o = out[sb];
      for (int j = 0; j < 8; ++j) {
        tile::transpose16(reinterpret_cast<const int8_t*>(codes[0] + 32 * j), sizeof(codes[0]), &o.w[8 * j]);
      }
      o.d = tile::gather_halves16(blk, offsetof(B, d));
    }
  }

  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    for (int64_t b = 0; b < kc; ++b) {
      const BlockQ8_K& y = reinterpret_cast<const BlockQ8_K*>(act)[b];
      t->neg_sum[b] = -avx2::hsum_i32(_mm256_madd_epi16(load256(y.bsums), _mm256_set1_epi16(1)));
    }
  }

  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const tok[], int64_t kc, __m512 acc[]) {
    for (int64_t sb = 0; sb < kc; ++sb) {
      const Panel& p = pb[sb];
      const uint8_t* qs[T];
      for (int t = 0; t < T; ++t) qs[t] = act[t] + sb * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs);
      __m512i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_set1_epi32(tok[t]->neg_sum[sb]);
#pragma GCC unroll 8
      for (int k = 0; k < 64; ++k) {
        const __m512i wk = _mm512_load_si512(&p.w[k]);
        for (int t = 0; t < T; ++t) isum[t] = _mm512_dpbusd_epi32(isum[t], wk, bcast4(qs[t] + 4 * k));
      }
      // vec_dot's float steps: (d * dy) * sum, then added to the running sum (no fused multiply-add).
      for (int t = 0; t < T; ++t) {
        float dy;
        std::memcpy(&dy, act[t] + sb * sizeof(BlockQ8_K), 4);
        const __m512 term = _mm512_mul_ps(_mm512_mul_ps(p.d, _mm512_set1_ps(dy)), _mm512_cvtepi32_ps(isum[t]));
        acc[t] = _mm512_add_ps(acc[t], term);
      }
    }
  }
};

using TQ1_0Format = TQFormat<avx2::tq::TQ1_0Codes>;
using TQ2_0Format = TQFormat<avx2::tq::TQ2_0Codes>;

// From two tokens on a panel pays: decoding a block costs less than two dot products of it.
constexpr int64_t kMinPanelTokens = 2;

}  // namespace gemmtq
}  // namespace

void register_gemm_tq(KernelTable& t) {
  using gemmtq::kMinPanelTokens, gemmtq::TQ1_0Format, gemmtq::TQ2_0Format;
  // Every token gets vec_dot's bits, as alone: the same kernels serve a step of single tokens.
  for (GemmFn* slot : {t.gemm, t.gemm_few}) {
    slot[static_cast<uint32_t>(DType::TQ1_0)] = tile::gemm_or_dots<TQ1_0Format, vec_dot<DType::TQ1_0>, kMinPanelTokens>;
    slot[static_cast<uint32_t>(DType::TQ2_0)] = tile::gemm_or_dots<TQ2_0Format, vec_dot<DType::TQ2_0>, kMinPanelTokens>;
  }
}

}  // namespace ox::kernels::avx512
