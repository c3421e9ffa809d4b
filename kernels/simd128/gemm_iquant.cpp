// SIMD128 gemm tiles of the codebook i-quants (IQ2_XXS .. IQ1_M) against Q8_K, through the
// super-block gemm of gemm_superblock.h. Prefill: sub-block j of a super-block is unit j, its
// decoded weights (iquant_impl.h) times their integer scales (|scale * w| <= 31 * 62, so a unit's
// i32 lane stays below 2^23), the super-block's d as the unit scale, no extras; the row's factor
// (1/8, 1/4) comes last. Decode: iquant::row against activations split once per call.
// Reference: quant_traits(W).vec_dot_ref.
#include "kernels/simd128/gemm_superblock.h"
#include "kernels/simd128/iquant_impl.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
namespace {

// The super-block gemm's description of an i-quant format (see gemm_superblock.h): units from
// the format's sub-block decode, or from F::unit_weights where the dot path's decode differs.
template <typename Format>
struct Tile : Format {
  using Block = typename Format::Block;
  static constexpr int kExtra = 0;
  static constexpr gemm::ActExtra kAct = gemm::ActExtra::kNone;
  static constexpr bool kTwoRows = false;
  struct Scales {};
  static Scales prepare(const Block&) { return {}; }
  static gemm::Unit16 unit(const Block& b, const Scales&, int j) {
    iquant::SubBlock s;
    if constexpr (requires { Format::unit_weights(b, j); }) {
      s = Format::unit_weights(b, j);
    } else {
      s = Format::sub_block(b, j);
    }
    return gemm::scaled2(gemm::widen(s.lo, s.hi), s.s0, s.s1);
  }
  static float extra(const Block&, const Scales&, int, int) { return 0.0f; }
  template <typename A>
  static float row(int64_t nb, const Block* x, const BlockQ8_K* y, A act, const kquant::Consts&) {
    return iquant::row<Format>(nb, x, y, act);
  }
};

// IQ1_S in a unit: the weights 8 grid + delta (delta = +-1 for the whole sub-block, qh bit 15),
// so that the unit's dot is the reference's 8 grid . q8 + delta sum q8 (sum q8 counted from the
// quants, which the reference reads from bsums: the same for every Q8_K row the quantizer makes).
struct IQ1SUnits : iquant::IQ1S {
  static iquant::SubBlock unit_weights(const Block& b, int ib) {
    iquant::SubBlock s = sub_block(b, ib);
    const v128_t delta = wasm_i8x16_splat((b.qh[ib] & 0x8000) ? -1 : 1);
    s.lo = wasm_i8x16_add(iquant::times8(s.lo), delta);
    s.hi = wasm_i8x16_add(iquant::times8(s.hi), delta);
    return s;
  }
};

}  // namespace

void gemm_iq2_xxs(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                  float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ2XXS>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq2_xs(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                 float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ2XS>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq2_s(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ2S>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq3_xxs(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                  float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ3XXS>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq3_s(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ3S>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq1_s(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                float* y, int64_t ys) {
  gemm::superblocks<Tile<IQ1SUnits>>(n, w, ws, nr, a, as, nt, y, ys);
}
void gemm_iq1_m(int64_t n, const uint8_t* w, uint64_t ws, int64_t nr, const uint8_t* a, uint64_t as, int64_t nt,
                float* y, int64_t ys) {
  gemm::superblocks<Tile<iquant::IQ1M>>(n, w, ws, nr, a, as, nt, y, ys);
}

}  // namespace ox::kernels::simd128
