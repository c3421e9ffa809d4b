// SIMD128 gemm_wide[F32, F16, BF16] (encoders' order-free embedding passes, KernelTable::gemm_wide):
// the outer-product tiles of kernels/gemm_float_outer.h over f32x4. Reference: vec_dot of the format
// within float rounding (each cell sums its products in index order, a product then a sum per k).
#include "kernels/gemm_float_outer.h"
#include "kernels/simd128/relaxed_slots.h"
#include "kernels/simd128/simd128.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// The outer-product tile's vectors (gemm_float_outer.h). wasm has no fused multiply-add outside
// relaxed SIMD: fmadd is a product and a sum, two roundings per k.
struct OuterVec {
  static constexpr int kLanes = 4;
  using Reg = v128_t;
  static Reg zero() { return wasm_f32x4_splat(0.0f); }
  static Reg load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, Reg v) { wasm_v128_store(p, v); }
  static Reg splat(float x) { return wasm_f32x4_splat(x); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
  static Reg loadu(const uint8_t* p) { return wasm_v128_load(p); }
  // 4 x 4: rows 0-1 and 2-3 interleaved (t0 = r00 r10 r01 r11, t1 = r02 r12 r03 r13, t2 and t3
  // the same of rows 2-3), then their 64-bit halves paired.
  static void transpose(Reg r[4]) {
    const Reg t0 = wasm_i32x4_shuffle(r[0], r[1], 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r[0], r[1], 2, 6, 3, 7);
    const Reg t2 = wasm_i32x4_shuffle(r[2], r[3], 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r[2], r[3], 2, 6, 3, 7);
    r[0] = wasm_i64x2_shuffle(t0, t2, 0, 2);
    r[1] = wasm_i64x2_shuffle(t0, t2, 1, 3);
    r[2] = wasm_i64x2_shuffle(t1, t3, 0, 2);
    r[3] = wasm_i64x2_shuffle(t1, t3, 1, 3);
  }
  // The main tile goes through the relaxed-SIMD slot (relaxed_slots.h); its smaller tail tiles
  // (half panels, the last odd row) stay here.
  template <int R, int kTok>
    requires(R == 2 && kTok == 16)
  static void tile(int64_t n, const uint8_t* const* w, const float* panel, float* cells) {
    wide_tile(static_cast<int32_t>(n), w[0], w[1], panel, cells);
  }
};

}  // namespace

// The SIMD128 body of the wide_tile slot (relaxed_slots.h); the splice finds it by its plain name.
extern "C" __attribute__((noinline)) void ox_simd128_wide_tile(int32_t n, const uint8_t* w0, const uint8_t* w1,
                                                               const float* panel, float* cells) {
  const uint8_t* const w[2] = {w0, w1};
  wide::outer_cells<OuterVec, 2, 16>(n, w, panel, cells);
}
// Not const: a pointer the optimizers cannot see through, so the slot stays a function of its own.
WideTileFn wide_tile = ox_simd128_wide_tile;

// Tiles of 2 rows x 16 tokens: 8 accumulators, 4 panel vectors, a broadcast weight and a product,
// within the 16 xmm registers V8 allocates from on x86. Timed under node (V8, x86) on bge's shapes
// (384-3072 columns, 32-160 tokens): 2 x 16 53-62 GFLOP/s on one thread, 4 x 8 and 3 x 8 28-61,
// tiles of 10-12 accumulators (5 x 8, 6 x 8, 3 x 16, 4 x 16) 11-35, vec_dot per cell 10-27.
// F16 and BF16 go through the same tiles once converted (wide::outer_gemm_half).
void patch_gemm_wide(KernelTable& t) {
  t.gemm_wide[static_cast<uint32_t>(DType::F32)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_or_dots<OuterVec, 2, 16>(vec_dot<DType::F32>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::F16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half<OuterVec, 2, 16>(to_float_f16, vec_dot<DType::F16>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::BF16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                       const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half<OuterVec, 2, 16>(to_float_bf16, vec_dot<DType::BF16>, n, w, ws, nr, a, as, nt, y, ys);
  };
}

}  // namespace ox::kernels::simd128
