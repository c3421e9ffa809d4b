// SIMD128 kernels of the codebook i-quants (IQ2_XXS .. IQ1_M) against Q8_K: vec_dot (each
// activation chunk split as it is read) and the tiles of the super-block gemm (gemm_superblock.h),
// both over the formats' decoding in iquant_impl.h; patch_iquants() installs one instantiation of
// each per format. Gemm prefill: sub-block j of a super-block is unit j, its decoded weights times
// their integer scales (|scale * w| <= 31 * 62, so a unit's i32 lane stays below 2^23), d as the
// unit scale, no extras, the row's factor (1/8, 1/4) last. Decode: iquant::row, which reads the
// activations' quants as they are; IQ2_S, IQ3_XXS and IQ3_S run it on row pairs through their
// relaxed-SIMD slots (relaxed_slots.h, relaxed/*_pairs.wat: the same bits). Reference:
// quant_traits(W).vec_dot_ref; integer parts exact.
#include "kernels/simd128/gemm_superblock.h"
#include "kernels/simd128/iquant_impl.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {

namespace iquant {

uint64_t kIQ1MWeights[4096];

namespace {
// Entry (delta bit << 11) | index: each byte of kIQ1SGrid[index] (-1, 0, 1) times 8, plus 1 or -1.
const bool kIQ1MWeightsBuilt = [] {
  for (uint32_t i = 0; i < 4096; ++i) {
    const uint64_t grid = quant::kIQ1SGrid[i & 2047];
    const int delta = (i & 2048) ? -1 : 1;
    uint64_t w = 0;
    for (int j = 0; j < 8; ++j) {
      const int v = 8 * static_cast<int8_t>(static_cast<uint8_t>(grid >> (8 * j))) + delta;
      w |= static_cast<uint64_t>(static_cast<uint8_t>(v)) << (8 * j);
    }
    kIQ1MWeights[i] = w;
  }
  return true;
}();
}  // namespace

}  // namespace iquant

namespace {

template <typename F>
void vec_dot_iq(int64_t n, float* s, const void* vx, const void* vy) {
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  *s = iquant::row<F>(n / kQK_K, static_cast<const typename F::Block*>(vx), y);
}

// The super-block gemm's description of an i-quant format (see gemm_superblock.h): units from the
// format's sub-block decode, or from F::unit_weights where the dot path's decode differs (IQ1_S).
template <typename Format>
struct Tile : Format {
  using Block = typename Format::Block;
  static constexpr int kExtra = 0;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kNone;
  static constexpr bool kTwoRows = false;
  static constexpr bool kSplitActs = false;  // row() reads y
  struct Scales {};
  static Scales prepare(const Block&) { return {}; }
  static gemm::Unit16 unit(const Block& b, const Scales&, int j) {
    iquant::SubBlock s;
    if constexpr (requires { Format::unit_weights(b, j); }) {
      s = Format::unit_weights(b, j);
    } else {
      s = Format::sub_block(b, j);
    }
    return gemm::scaled2(gemm::Unit16{{s.w[0], s.w[1], s.w[2], s.w[3]}}, s.s0, s.s1);
  }
  static float extra(const Block&, const Scales&, int, int) { return 0.0f; }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A, const kquant::Consts&) {
    return iquant::row<Format>(nb, x, y);
  }
};

// The formats with a relaxed decode body (Format::kPairs: the slot, kGrid, kMasks): decode runs
// rows in pairs through the slot (gemm::superblocks' kTwoRows path).
template <typename Format>
struct PairTile : Tile<Format> {
  static constexpr bool kTwoRows = true;
  static void pairs(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y, const v128_t*,
                    const v128_t*, float* out) {
    (*Format::kPairs)(nb, w, w_stride, pairs, y, Format::kGrid, Format::kMasks, out);
  }
};

// The SIMD128 body of an i-quant pairs slot (relaxed_slots.h): iquant::row on rows r and r + pairs.
template <typename F>
void pairs_simd128(int32_t nb, const uint8_t* w, uint32_t w_stride, int32_t pairs, const BlockQ8_K* y, float* out) {
  using Block = typename F::Block;
  auto row = [&](int32_t r) { return reinterpret_cast<const Block*>(w + static_cast<uint32_t>(r) * w_stride); };
  for (int32_t r = 0; r < pairs; ++r) {
    out[r] = iquant::row<F>(nb, row(r), y);
    out[r + pairs] = iquant::row<F>(nb, row(r + pairs), y);
  }
}

template <typename F>
void install(KernelTable& t, DType type) {
  t.vec_dot[static_cast<uint32_t>(type)] = vec_dot_iq<F>;
  if constexpr (requires { F::kPairs; }) {
    t.gemm[static_cast<uint32_t>(type)] = gemm::superblocks<PairTile<F>>;
  } else {
    t.gemm[static_cast<uint32_t>(type)] = gemm::superblocks<Tile<F>>;
  }
  t.gemm_all_tokens[static_cast<uint32_t>(type)] = true;  // superblocks: its own passes of tokens
}

// The slots' formats: the grid and sign masks their relaxed bodies read.
struct IQ2SPairs : iquant::IQ2S {
  static constexpr const IqPairsFn* kPairs = &iq2_s_pairs;
  static constexpr const void* kGrid = quant::kIQ2SGrid;
  static constexpr const uint64_t* kMasks = iquant::kSignMasks8.r;
};
struct IQ3XXSPairs : iquant::IQ3XXS {
  static constexpr const IqPairsFn* kPairs = &iq3_xxs_pairs;
  static constexpr const void* kGrid = quant::kIQ3XXSGrid;
  static constexpr const uint64_t* kMasks = iquant::kSignMasks7.r;
};
struct IQ3SPairs : iquant::IQ3S {
  static constexpr const IqPairsFn* kPairs = &iq3_s_pairs;
  static constexpr const void* kGrid = quant::kIQ3SGrid;
  static constexpr const uint64_t* kMasks = iquant::kSignMasks8.r;
};
}  // namespace

void patch_iquants(KernelTable& t) {
  install<iquant::IQ2XXS>(t, DType::IQ2_XXS);
  install<iquant::IQ2XS>(t, DType::IQ2_XS);
  install<IQ2SPairs>(t, DType::IQ2_S);
  install<IQ3XXSPairs>(t, DType::IQ3_XXS);
  install<IQ3SPairs>(t, DType::IQ3_S);
  install<iquant::IQ1S>(t, DType::IQ1_S);
  install<iquant::IQ1M>(t, DType::IQ1_M);
}

}  // namespace ox::kernels::simd128

// The SIMD128 bodies of the i-quant pairs slots; the splice finds them by their plain names.
extern "C" __attribute__((noinline)) void ox_simd128_iq2_s_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                 int32_t pairs, const ox::BlockQ8_K* y, const void*,
                                                                 const uint64_t*, float* out) {
  ox::kernels::simd128::pairs_simd128<ox::kernels::simd128::iquant::IQ2S>(nb, w, w_stride, pairs, y, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_iq3_xxs_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                   int32_t pairs, const ox::BlockQ8_K* y, const void*,
                                                                   const uint64_t*, float* out) {
  ox::kernels::simd128::pairs_simd128<ox::kernels::simd128::iquant::IQ3XXS>(nb, w, w_stride, pairs, y, out);
}
extern "C" __attribute__((noinline)) void ox_simd128_iq3_s_pairs(int32_t nb, const uint8_t* w, uint32_t w_stride,
                                                                 int32_t pairs, const ox::BlockQ8_K* y, const void*,
                                                                 const uint64_t*, float* out) {
  ox::kernels::simd128::pairs_simd128<ox::kernels::simd128::iquant::IQ3S>(nb, w, w_stride, pairs, y, out);
}

namespace ox::kernels::simd128 {
// Not const: pointers the optimizers cannot see through, so the slots stay functions of their own.
IqPairsFn iq2_s_pairs = ox_simd128_iq2_s_pairs;
IqPairsFn iq3_xxs_pairs = ox_simd128_iq3_xxs_pairs;
IqPairsFn iq3_s_pairs = ox_simd128_iq3_s_pairs;
}  // namespace ox::kernels::simd128
