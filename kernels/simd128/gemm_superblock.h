// The gemm of the 256-element super-block formats (the K-quants, IQ4_XS, the codebook i-quants)
// over a format description F (gemm_kquant.cpp, iquant.cpp): decode runs F::row against
// activations split once per call (or F's row-pair slots), prefill packs each 32-element slice of
// a super-block as one unit of gemm_tile.h with its integer sub-block scales multiplied in, F::d
// (default: the block's fp16 d) as the unit scale and F's min terms as extras; a format whose
// reference scales the row's sum by a power of two (F::kFactor) gets its outputs scaled last.
#pragma once

#include "core/quant/traits.h"
#include "kernels/simd128/gemm_i7.h"
#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/kquant_impl.h"
#include "kernels/simd128/relaxed_slots.h"

namespace ox::kernels::simd128::gemm {

template <typename F>
constexpr bool kInterleaved = requires { F::il_pairs; };

// The super-block scale of b: F::d(b) where F has one (IQ1_M spreads it over its scales), else b.d.
template <typename F>
float superblock_d(const typename F::Block& b) {
  if constexpr (requires { F::d(b); }) {
    return F::d(b);
  } else {
    return fp16(b.d);
  }
}

// The reference's final factor of a row (1 where F has none).
template <typename F>
constexpr float row_factor() {
  if constexpr (requires { F::kFactor; }) {
    return F::kFactor;
  } else {
    return 1.0f;
  }
}

// Whether F's decode rows read activations split into even / odd i16 (gemm::split_acts_q8_k);
// a format whose rows read the quants themselves says kSplitActs = false.
template <typename F>
constexpr bool wants_split_acts() {
  if constexpr (requires { F::kSplitActs; }) {
    return F::kSplitActs;
  } else {
    return true;
  }
}

// One weight row in the packed layout (at `row`, see gemm::packed_row): each super-block is two
// groups of four units.
template <typename F>
void pack_superblock_row(const typename F::Block* x, int64_t nb, gemm::PackedRow row) {
  v128_t* out = row.out;
  const int64_t step = row.step;
  for (int64_t i = 0; i < nb; ++i) {
    const typename F::Scales s = F::prepare(x[i]);
    const v128_t d = wasm_f32x4_splat(superblock_d<F>(x[i]));
    for (int g = 0; g < 2; ++g) {
      const Unit16 u[4] = {F::unit(x[i], s, 4 * g), F::unit(x[i], s, 4 * g + 1), F::unit(x[i], s, 4 * g + 2),
                           F::unit(x[i], s, 4 * g + 3)};
      gemm::store_group(out, step, u);
      out += gemm::kGroupVecs * step;
      *out = d;
      out += step;
      for (int e = 1; e <= F::kExtra; ++e) {
        *out = wasm_f32x4_make(F::extra(x[i], s, 4 * g, e), F::extra(x[i], s, 4 * g + 1, e),
                               F::extra(x[i], s, 4 * g + 2, e), F::extra(x[i], s, 4 * g + 3, e));
        out += step;
      }
    }
  }
}

// Whether F has a byte-group prefill (gemm_i7.h): F::unit_bytes(b, j), unit j's stored values
// (0..15), and F::unit_scale(s, j), its integer sub-block scale (0..63), the values F::unit scales.
template <typename F>
constexpr bool kBytePrefill = requires { &F::unit_bytes; };

// One weight row of nb super-blocks as byte super-blocks (gemm_i7.h) at `row`.
template <typename F>
void pack_i7_superblock_row(const typename F::Block* x, int64_t nb, gemm::PackedRow row) {
  v128_t* out = row.out;
  const int64_t step = row.step;
  for (int64_t i = 0; i < nb; ++i, out += gemm::kI7SuperWeightStride * step) {
    const typename F::Scales s = F::prepare(x[i]);
    for (int g = 0; g < 2; ++g) {
      const gemm::UnitBytes q[4] = {F::unit_bytes(x[i], 4 * g), F::unit_bytes(x[i], 4 * g + 1),
                                    F::unit_bytes(x[i], 4 * g + 2), F::unit_bytes(x[i], 4 * g + 3)};
      gemm::store_i7_group(out + g * gemm::kI7GroupVecs * step, step, q);
      const auto sc = [&](int j) { return static_cast<int16_t>(F::unit_scale(s, 4 * g + j)); };
      out[(gemm::kI7SuperVecs + g) * step] = wasm_i16x8_make(sc(0), sc(0), sc(1), sc(1), sc(2), sc(2), sc(3), sc(3));
      out[(gemm::kI7SuperVecs + 3 + g) * step] = wasm_f32x4_make(F::extra(x[i], s, 4 * g, 1), F::extra(x[i], s, 4 * g + 1, 1),
                                                                 F::extra(x[i], s, 4 * g + 2, 1), F::extra(x[i], s, 4 * g + 3, 1));
    }
    out[(gemm::kI7SuperVecs + 2) * step] = wasm_f32x4_splat(superblock_d<F>(x[i]));
  }
}

// Whether F has a u8 super-block prefill (gemm_i7.h): F::unit_u8(b, j), unit j's values + 128 as
// bytes, and F::unit_scale_signed(b, j), its integer sub-block scale.
template <typename F>
constexpr bool kU8Prefill = requires { &F::unit_u8; };

// Prefill on u8 super-blocks where u8_dot_exact() holds: the integers and the float step of the
// packed i16 product below (kExtra 0), so the same bits.
template <typename F>
void superblocks_u8(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                    uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  static_assert(F::kExtra == 0 && row_factor<F>() == 1.0f, "the u8 super-block holds no min terms");
  using Block = typename F::Block;
  const int64_t nb = n / kQK_K, row_vecs = nb * gemm::kU8SuperWeightStride;
  const v128_t* pa = gemm::pack_acts_q8_k_u8(n, a, a_stride, n_tokens, 128);
  v128_t* pw = gemm::scratch(gemm::Slot::kWeights, row_vecs * gemm::kPackRows);
  for (int64_t r0 = 0; r0 < n_rows; r0 += gemm::kPackRows) {
    const int64_t nr = n_rows - r0 < gemm::kPackRows ? n_rows - r0 : gemm::kPackRows;
    for (int64_t r = 0; r < nr; ++r) {
      const Block* x = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r0 + r) * w_stride);
      const gemm::PackedRow pr = gemm::packed_row(pw, row_vecs, r, nr, gemm::kTileRows);
      v128_t* out = pr.out;
      for (int64_t i = 0; i < nb; ++i, out += gemm::kU8SuperWeightStride * pr.step) {
        for (int g = 0; g < 2; ++g) {
          const gemm::UnitBytes q[4] = {F::unit_u8(x[i], 4 * g), F::unit_u8(x[i], 4 * g + 1), F::unit_u8(x[i], 4 * g + 2),
                                        F::unit_u8(x[i], 4 * g + 3)};
          gemm::store_i7_group(out + g * gemm::kI7GroupVecs * pr.step, pr.step, q);
          out[(gemm::kI7SuperVecs + g) * pr.step] =
              wasm_i32x4_make(F::unit_scale_signed(x[i], 4 * g), F::unit_scale_signed(x[i], 4 * g + 1),
                              F::unit_scale_signed(x[i], 4 * g + 2), F::unit_scale_signed(x[i], 4 * g + 3));
        }
        out[(gemm::kI7SuperVecs + 2) * pr.step] = wasm_f32x4_splat(superblock_d<F>(x[i]));
      }
    }
    const int64_t a_row = nb * gemm::kU8SuperActStride, pass = gemm::pass_tokens(a_row);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += pass) {
      const int64_t nt = n_tokens - t0 < pass ? n_tokens - t0 : pass;
      gemm::u8_superblock_product(pw, nr, pa + t0 * a_row, nt, nb, y + t0 * y_stride + r0, y_stride);
    }
  }
}

// Prefill on byte super-blocks (relaxed module only): the same integers and float steps as the
// packed i16 product below, so the same bits, with the i7_superblock_tile slot's 16 products an
// instruction.
template <typename F>
void superblocks_i7(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                    uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  static_assert(F::kExtra == 1 && row_factor<F>() == 1.0f, "the byte super-block holds one min term per unit");
  using Block = typename F::Block;
  const int64_t nb = n / kQK_K, row_vecs = nb * gemm::kI7SuperWeightStride;
  const v128_t* pa = gemm::pack_acts_q8_k_i7(n, a, a_stride, n_tokens);
  v128_t* pw = gemm::scratch(gemm::Slot::kWeights, row_vecs * gemm::kPackRows);
  for (int64_t r0 = 0; r0 < n_rows; r0 += gemm::kPackRows) {
    const int64_t nr = n_rows - r0 < gemm::kPackRows ? n_rows - r0 : gemm::kPackRows;
    for (int64_t r = 0; r < nr; ++r) {
      const Block* x = reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r0 + r) * w_stride);
      pack_i7_superblock_row<F>(x, nb, gemm::packed_row(pw, row_vecs, r, nr, gemm::kTileRows));
    }
    // Every token (gemm_all_tokens) in passes of gemm::kPassActBytes.
    const int64_t a_row = nb * gemm::kI7SuperActStride, pass = gemm::pass_tokens(a_row);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += pass) {
      const int64_t nt = n_tokens - t0 < pass ? n_tokens - t0 : pass;
      gemm::i7_superblock_product(pw, nr, pa + t0 * a_row, nt, nb, y + t0 * y_stride + r0, y_stride);
    }
  }
}

template <typename F>
void superblocks(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                 uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  using Block = typename F::Block;
  const int64_t nb = n / kQK_K;
  auto row = [&](int64_t r) { return reinterpret_cast<const Block*>(w + static_cast<uint64_t>(r) * w_stride); };
  if (n_tokens < gemm::kPackMinTokens) {
    const kquant::Consts consts = kquant::opaque_consts();
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint8_t* at = a + static_cast<uint64_t>(t) * a_stride;
      const BlockQ8_K* yt = reinterpret_cast<const BlockQ8_K*>(at);
      if constexpr (kInterleaved<F>) {
        float* yr = y + t * y_stride;
        const int64_t pairs = n_rows / 2;
        F::il_pairs(static_cast<int32_t>(nb), w, static_cast<uint32_t>(w_stride), static_cast<int32_t>(pairs), yt,
                    F::acts(n, at), relaxed_constants, yr);
        // An odd last row (no real model's matrix has one): the scalar reference.
        if (n_rows % 2 != 0) quant_traits(F::kType).vec_dot_ref(n, &yr[n_rows - 1], row(n_rows - 1), yt);
      } else if constexpr (F::kTwoRows) {
        // The relaxed bodies read y itself; the split is for the SIMD128 body and an odd last row
        // (of a format that reads it).
        const bool split = wants_split_acts<F>() && (!relaxed_active() || n_rows % 2 != 0);
        const kquant::PreSplit act{split ? gemm::split_acts_q8_k(n, at) : nullptr};
        float* yr = y + t * y_stride;
        // Rows r and r + n_rows / 2 together: two unbroken streams through the weights (adjacent
        // rows in pairs start a new stream every two rows, which the prefetcher does not keep up with).
        const int64_t pairs = n_rows / 2;
        F::pairs(static_cast<int32_t>(nb), w, static_cast<uint32_t>(w_stride), static_cast<int32_t>(pairs), yt, act.p,
                 relaxed_constants, yr);
        if (n_rows % 2 != 0) yr[n_rows - 1] = F::row(nb, row(n_rows - 1), yt, act, consts);
      } else {
        const kquant::PreSplit act{wants_split_acts<F>() ? gemm::split_acts_q8_k(n, at) : nullptr};
        for (int64_t r = 0; r < n_rows; ++r) y[t * y_stride + r] = F::row(nb, row(r), yt, act, consts);
      }
    }
    return;
  }
  if constexpr (kBytePrefill<F>) {
    // Only where the relaxed tile runs: in SIMD128 the i16 groups are faster than widening bytes.
    if (relaxed_active()) return superblocks_i7<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  if constexpr (kU8Prefill<F>) {
    if (u8_dot_exact()) return superblocks_u8<F>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
  const v128_t* pa = gemm::pack_acts_q8_k(n, a, a_stride, n_tokens, F::kAct);
  const int64_t n_units = n / 32, row_vecs = gemm::packed_row_vecs(n_units, F::kExtra);
  v128_t* pw = gemm::scratch(gemm::Slot::kWeights, row_vecs * gemm::kPackRows);
  for (int64_t r0 = 0; r0 < n_rows; r0 += gemm::kPackRows) {
    const int64_t nr = n_rows - r0 < gemm::kPackRows ? n_rows - r0 : gemm::kPackRows;
    for (int64_t r = 0; r < nr; ++r) pack_superblock_row<F>(row(r0 + r), nb, gemm::packed_row(pw, row_vecs, r, nr, gemm::kTileRows));
    gemm::packed_product_passes<F::kExtra, true>(pw, nr, pa, n_tokens, n_units, y + r0, y_stride);
    if constexpr (row_factor<F>() != 1.0f) {
      for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t r = 0; r < nr; ++r) y[t * y_stride + r0 + r] *= row_factor<F>();
    }
  }
}

}  // namespace ox::kernels::simd128::gemm
