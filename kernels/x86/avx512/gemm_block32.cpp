// AVX-512 VNNI tile kernels of the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL, MXFP4): 16-row panels (gemm_tile.h), vpdpbusd accumulating exact i32 block sums, then one
// float FMA per block and row. One token goes through the AVX2 eight-row decode kernels, 2-8 tokens
// of Q4_0, Q5_0, Q8_0, IQ4_NL and MXFP4 through gemm_few_block32.cpp.
// Reference: quant_traits(W).vec_dot_ref; integer sums exact, float order differs.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/codebook.h"
#include "kernels/x86/avx2/gemm_decode.h"
#include "kernels/x86/avx2/gemm_pack.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/gemm_tile.h"
#include "kernels/x86/avx512/util.h"

namespace ox::kernels::avx512 {
namespace {
namespace gemm32 {  // (all AVX-512 sources share one translation unit in the emulated test)

using tile::bcast4;
using tile::join;

constexpr int kChunk = 16, kTokens = 8;

// Signed weights against activations + 128 (u8): vpdpbusd needs one unsigned side, and the bias
// adds 128 * sum(w) per row and block, which the panel keeps to subtract. Any signed byte works:
// the i32 accumulation cannot saturate, so Q8_0, IQ4_NL and MXFP4 need no sign trick here.
struct PanelS {
  __m512i w[8];  // w[k] lane r: elements 4k..4k+3 of row r
  __m512i corr;
  __m512 d;
};

struct TokS {
  __m256i q[kChunk];  // activation quants + 128
  float d[kChunk];
};

// Unsigned weights (Q4_1, Q5_1) against the signed activations as they are, plus m * s.
struct PanelU {
  __m512i w[8];
  __m512 d, m;
};

struct TokU {
  float d[kChunk], s[kChunk];
};

// The fp16 d that leads the blocks of most formats, 8 rows' worth.
struct LeadingHalf {
  __m256 operator()(const uint8_t* const blk[8]) const { return avx2::tile::gather_halves(blk, 0); }
};

// Loader(blk, q): the signed (S) or unsigned (U) weights of 8 rows' blocks in element order;
// Scales(blk): their scales.
template <class Loader, class Scales = LeadingHalf>
inline void pack_s(PanelS* out, const uint8_t* const rows[16], int64_t kc, uint64_t block_bytes, Loader load,
                   Scales scales = {}) {
  for (int64_t b = 0; b < kc; ++b) {
    const uint8_t* blk[16];
    for (int r = 0; r < 16; ++r) blk[r] = rows[r] + static_cast<uint64_t>(b) * block_bytes;
    __m256i lo[8], hi[8];
    load(blk, lo);
    load(blk + 8, hi);
    for (int k = 0; k < 8; ++k) out[b].w[k] = join(lo[k], hi[k]);
    out[b].corr = join(avx2::pack::bias_correction(lo, 8), avx2::pack::bias_correction(hi, 8));
    out[b].d = join(scales(blk), scales(blk + 8));
  }
}

template <class Loader>
inline void pack_u(PanelU* out, const uint8_t* const rows[16], int64_t kc, uint64_t block_bytes, Loader load) {
  for (int64_t b = 0; b < kc; ++b) {
    const uint8_t* blk[16];
    for (int r = 0; r < 16; ++r) blk[r] = rows[r] + static_cast<uint64_t>(b) * block_bytes;
    __m256i lo[8], hi[8];
    load(blk, lo);
    load(blk + 8, hi);
    for (int k = 0; k < 8; ++k) out[b].w[k] = join(lo[k], hi[k]);
    out[b].d = tile::gather_halves16(blk, 0);
    out[b].m = tile::gather_halves16(blk, 2);
  }
}

// Field pointers `offset` into each of 8 blocks.
inline void field(const uint8_t* const blk[8], uint64_t offset, const uint8_t* out[8]) {
  for (int r = 0; r < 8; ++r) out[r] = blk[r] + offset;
}

struct RunS {
  using Panel = PanelS;
  using Tok = TokS;
  static constexpr int kChunk = gemm32::kChunk, kTokens = gemm32::kTokens;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_0);
  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t b = 0; b < kc; ++b) t->q[b] = _mm256_xor_si256(load256(act + b * sizeof(BlockQ8_0) + 2), bias);
    avx2::tile::halves_to_floats(act, sizeof(BlockQ8_0), kc, t->d);
  }
  template <int T>
  static void run(const Panel* pb, const uint8_t* const*, const Tok* const tok[], int64_t kc, __m512 acc[]) {
    for (int64_t b = 0; b < kc; ++b) {
      __m512i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
      for (int k = 0; k < 8; ++k) {
        const __m512i wk = _mm512_load_si512(&pb[b].w[k]);
        for (int t = 0; t < T; ++t) {
          isum[t] = _mm512_dpbusd_epi32(isum[t], bcast4(reinterpret_cast<const uint8_t*>(&tok[t]->q[b]) + 4 * k), wk);
        }
      }
      for (int t = 0; t < T; ++t) {
        const __m512 scale = _mm512_mul_ps(pb[b].d, _mm512_set1_ps(tok[t]->d[b]));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(isum[t], pb[b].corr)), scale, acc[t]);
      }
    }
  }
};

struct RunU {
  using Panel = PanelU;
  using Tok = TokU;
  static constexpr int kChunk = gemm32::kChunk, kTokens = gemm32::kTokens;
  static constexpr uint64_t kABlockBytes = sizeof(BlockQ8_1);
  static void prep(Tok* t, const uint8_t* act, int64_t kc) {
    avx2::tile::halves_to_floats(act, sizeof(BlockQ8_1), kc, t->d);
    avx2::tile::halves_to_floats(act + 2, sizeof(BlockQ8_1), kc, t->s);
  }
  template <int T>
  static void run(const Panel* pb, const uint8_t* const act[], const Tok* const tok[], int64_t kc, __m512 acc[]) {
    for (int64_t b = 0; b < kc; ++b) {
      __m512i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
      for (int k = 0; k < 8; ++k) {
        const __m512i wk = _mm512_load_si512(&pb[b].w[k]);
        for (int t = 0; t < T; ++t) {
          isum[t] = _mm512_dpbusd_epi32(isum[t], wk, bcast4(act[t] + b * sizeof(BlockQ8_1) + 4 + 4 * k));
        }
      }
      for (int t = 0; t < T; ++t) {
        const __m512 scale = _mm512_mul_ps(pb[b].d, _mm512_set1_ps(tok[t]->d[b]));
        const __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), scale, acc[t]);
        acc[t] = _mm512_fmadd_ps(pb[b].m, _mm512_set1_ps(tok[t]->s[b]), v);
      }
    }
  }
};

struct Q4_0Format : RunS {
  static constexpr int kBlockElems = kQK4_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_0);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_s(out, rows, kc, kWBlockBytes, [](const uint8_t* const blk[8], __m256i q[8]) {
      const uint8_t* qs[8];
      field(blk, 2, qs);
      avx2::pack::nibbles(qs, q);
      for (int k = 0; k < 8; ++k) q[k] = _mm256_sub_epi8(q[k], _mm256_set1_epi8(8));
    });
  }
};

struct Q5_0Format : RunS {
  static constexpr int kBlockElems = kQK5_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_0);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_s(out, rows, kc, kWBlockBytes, [](const uint8_t* const blk[8], __m256i q[8]) {
      const uint8_t *qh[8], *qs[8];
      field(blk, 2, qh);
      field(blk, 6, qs);
      avx2::pack::q5_values(qh, qs, q);
      for (int k = 0; k < 8; ++k) q[k] = _mm256_sub_epi8(q[k], _mm256_set1_epi8(16));
    });
  }
};

struct Q8_0Format : RunS {
  static constexpr int kBlockElems = kQK8_0;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ8_0);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_s(out, rows, kc, kWBlockBytes, [](const uint8_t* const blk[8], __m256i q[8]) {
      const uint8_t* qs[8];
      field(blk, 2, qs);
      avx2::pack::bytes32(qs, q);
    });
  }
};

// IQ4_NL, MXFP4: nibbles through a 16-entry codebook (C: avx2/codebook.h).
template <class C>
struct CodebookFormat : RunS {
  static constexpr int kBlockElems = 32;
  static constexpr uint64_t kWBlockBytes = C::kBytes;
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_s(
        out, rows, kc, kWBlockBytes,
        [](const uint8_t* const blk[8], __m256i q[8]) {
          const uint8_t* qs[8];
          field(blk, C::kQs, qs);
          avx2::codebook::values<C>(qs, q);
        },
        [](const uint8_t* const blk[8]) { return avx2::codebook::scales<C>(blk); });
  }
};

struct Q4_1Format : RunU {
  static constexpr int kBlockElems = kQK4_1;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ4_1);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_u(out, rows, kc, kWBlockBytes, [](const uint8_t* const blk[8], __m256i q[8]) {
      const uint8_t* qs[8];
      field(blk, 4, qs);
      avx2::pack::nibbles(qs, q);
    });
  }
};

struct Q5_1Format : RunU {
  static constexpr int kBlockElems = kQK5_1;
  static constexpr uint64_t kWBlockBytes = sizeof(BlockQ5_1);
  static void pack(Panel* out, const uint8_t* const rows[16], int64_t kc) {
    pack_u(out, rows, kc, kWBlockBytes, [](const uint8_t* const blk[8], __m256i q[8]) {
      const uint8_t *qh[8], *qs[8];
      field(blk, 4, qh);
      field(blk, 8, qs);
      avx2::pack::q5_values(qh, qs, q);
    });
  }
};

// Fewer tokens than this: packing costs more than it saves; `kDecode` (eight rows per pass, each
// token on its own) runs instead, or from 2 tokens on `kFew` where the format has one.
constexpr int64_t kMinPanelTokens = 4;

template <class F, GemmFn kDecode, GemmFn kFew = nullptr>
void gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
          int64_t n_tokens, float* y, int64_t y_stride) {
  if constexpr (kFew != nullptr) {
    if (few_tokens::pay(n_tokens)) return kFew(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  if (n_tokens < kMinPanelTokens) return kDecode(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  tile::gemm_panels<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
}

// One format's slots: the panels, the AVX2 eight-row decode kernel, and the few-token kernel where
// it has one (which is also its gemm_few).
template <DType W, class F, bool kHasFew>
void install(KernelTable& t) {
  const auto i = static_cast<uint32_t>(W);
  if constexpr (kHasFew) {
    t.gemm[i] = gemm<F, avx2::decode8<W>, gemm_few_block32<W>>;
    t.gemm_few[i] = gemm_few_block32<W>;
  } else {
    t.gemm[i] = gemm<F, avx2::decode8<W>>;
  }
}

}  // namespace gemm32
}  // namespace

void register_gemm_block32(KernelTable& t) {
  gemm32::install<DType::Q4_0, gemm32::Q4_0Format, true>(t);
  gemm32::install<DType::Q4_1, gemm32::Q4_1Format, false>(t);
  gemm32::install<DType::Q5_0, gemm32::Q5_0Format, true>(t);
  gemm32::install<DType::Q5_1, gemm32::Q5_1Format, false>(t);
  gemm32::install<DType::Q8_0, gemm32::Q8_0Format, true>(t);
  gemm32::install<DType::IQ4_NL, gemm32::CodebookFormat<avx2::codebook::IQ4_NL>, true>(t);
  gemm32::install<DType::MXFP4, gemm32::CodebookFormat<avx2::codebook::MXFP4>, true>(t);
}

}  // namespace ox::kernels::avx512
