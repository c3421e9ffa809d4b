// NEON gemm_wide[F32, F16, BF16] (encoders' order-free embedding passes, KernelTable::gemm_wide):
// the outer-product tiles of kernels/gemm_float_outer.h over float32x4 with fused multiply-adds.
// Reference: vec_dot of the format within float rounding (each cell sums its products in index order).
#include <arm_neon.h>

#include "kernels/gemm_float_outer.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {
namespace {

// The outer-product tile's vectors (gemm_float_outer.h).
struct OuterVec {
  static constexpr int kLanes = 4;
  using Reg = float32x4_t;
  static Reg zero() { return vdupq_n_f32(0.0f); }
  static Reg load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Reg v) { vst1q_f32(p, v); }
  static Reg splat(float x) { return vdupq_n_f32(x); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return vfmaq_f32(c, a, b); }
  static Reg loadu(const uint8_t* p) { return vld1q_f32(reinterpret_cast<const float*>(p)); }
  // 4 x 4: rows 0-1 and 2-3 interleaved (t0 = r00 r10 r01 r11, t1 = r02 r12 r03 r13, t2 and t3
  // the same of rows 2-3), then their 64-bit halves paired.
  static void transpose(Reg r[4]) {
    const float64x2_t t0 = vreinterpretq_f64_f32(vzip1q_f32(r[0], r[1]));
    const float64x2_t t1 = vreinterpretq_f64_f32(vzip2q_f32(r[0], r[1]));
    const float64x2_t t2 = vreinterpretq_f64_f32(vzip1q_f32(r[2], r[3]));
    const float64x2_t t3 = vreinterpretq_f64_f32(vzip2q_f32(r[2], r[3]));
    r[0] = vreinterpretq_f32_f64(vzip1q_f64(t0, t2));
    r[1] = vreinterpretq_f32_f64(vzip2q_f64(t0, t2));
    r[2] = vreinterpretq_f32_f64(vzip1q_f64(t1, t3));
    r[3] = vreinterpretq_f32_f64(vzip2q_f64(t1, t3));
  }
};

}  // namespace

// Tiles of 4 rows x 16 tokens: 16 accumulators, 4 panel vectors and 4 weights of the 32 vector
// registers (GCC 12 loads a tile's weights for a k at once; at 6 x 16 that is 34 registers, and it
// spilled). F16 and BF16 go through the same tiles once converted (wide::outer_gemm_half).
void patch_gemm_wide(KernelTable& t) {
  t.gemm_wide[static_cast<uint32_t>(DType::F32)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_or_dots<OuterVec, 4, 16>(vec_dot<DType::F32>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::F16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                      const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half<OuterVec, 4, 16>(to_float_f16, vec_dot<DType::F16>, n, w, ws, nr, a, as, nt, y, ys);
  };
  t.gemm_wide[static_cast<uint32_t>(DType::BF16)] = [](int64_t n, const uint8_t* w, uint64_t ws, int64_t nr,
                                                       const uint8_t* a, uint64_t as, int64_t nt, float* y, int64_t ys) {
    wide::outer_gemm_half<OuterVec, 4, 16>(to_float_bf16, vec_dot<DType::BF16>, n, w, ws, nr, a, as, nt, y, ys);
  };
}

}  // namespace ox::kernels::neon
