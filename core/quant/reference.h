// The scalar reference functions of every format, one family per .cpp in core/quant/.
// quant_traits() (traits.cpp) is the public way in; SIMD kernels name the function they must match.
//
// Dot product contract (vec_dot_*): per block, an exact integer sum of weight quant times
// activation quant (with the block's sub-block scales folded in as integers); then one float
// term per block, `(d_w * d_a) * (float)isum` (minus the min term for the asymmetric formats),
// added to a float accumulator in block order, starting from 0. SIMD versions may only change
// that final float summation order (and may fuse multiply-adds).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/quant/traits.h"

namespace ox::quant {

// f32_to_fp16 that clamps to +-65504 first: a scale too large for fp16 clips the block's values
// instead of turning them into Inf (or NaN where a quant is 0). Identical below 65520.
inline uint16_t fp16_saturate(float f) { return f32_to_fp16(std::fmin(65504.0f, std::fmax(-65504.0f, f))); }

// (int)v clamped to [lo, hi], truncating toward zero like a C cast; NaN gives lo (a bare cast of
// NaN or of an out-of-range float is undefined behaviour).
inline int trunc_clamp(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(v);
}

// nearbyintf(v) under the default rounding mode (ties to even), without a libm call on x86-64
// baseline (no SSE4.1 roundss): adding and removing 1.5 * 2^23 rounds any |v| < 2^22 to an
// integer in the FPU's mode. Larger magnitudes and NaN take the library path.
inline float round_even(float v) {
  if (std::fabs(v) < 0x1p22f) return (v + 0x1.8p23f) - 0x1.8p23f;
  return std::nearbyintf(v);
}

// round_even(v) clamped to [lo, hi]; NaN gives lo.
inline int round_clamp(float v, int lo, int hi) { return trunc_clamp(round_even(v), lo, hi); }

// ---- plain float formats (float_formats.cpp)
void dequantize_f32(const void* x, float* y, int64_t n);
void quantize_f32(const float* x, void* y, int64_t n);
void vec_dot_f32_f32(int64_t n, float* s, const void* x, const void* y);
void dequantize_f16(const void* x, float* y, int64_t n);
void quantize_f16(const float* x, void* y, int64_t n);
void vec_dot_f16_f16(int64_t n, float* s, const void* x, const void* y);
void dequantize_bf16(const void* x, float* y, int64_t n);
void quantize_bf16(const float* x, void* y, int64_t n);
void vec_dot_bf16_bf16(int64_t n, float* s, const void* x, const void* y);

// ---- 32-element legacy formats (q4.cpp, q5.cpp, q8.cpp). For these, the K-quants and IQ4_NL /
// IQ4_XS, quantize_rows_* is the QuantizeRowsFn: quantize_* (llama.cpp's quantize_row_*_ref, or
// for IQ4_NL its quantize_iq4_nl without importance) on each row without importance, llama.cpp's
// quantize_row_*_impl searches with it. Q8_0's ignores importance, as llama.cpp's does, and rounds
// ties away from zero as llama.cpp's weight quantizer does (quantize_q8_0 is the activation recipe).
void dequantize_q4_0(const void* x, float* y, int64_t n);
void quantize_q4_0(const float* x, void* y, int64_t n);
void quantize_rows_q4_0(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void dequantize_q4_1(const void* x, float* y, int64_t n);
void quantize_q4_1(const float* x, void* y, int64_t n);
void quantize_rows_q4_1(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* x, const void* y);
void dequantize_q5_0(const void* x, float* y, int64_t n);
void quantize_q5_0(const float* x, void* y, int64_t n);
void quantize_rows_q5_0(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void dequantize_q5_1(const void* x, float* y, int64_t n);
void quantize_q5_1(const float* x, void* y, int64_t n);
void quantize_rows_q5_1(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* x, const void* y);
void dequantize_q8_0(const void* x, float* y, int64_t n);
void quantize_q8_0(const float* x, void* y, int64_t n);  // the activation recipe
void quantize_rows_q8_0(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* x, const void* y);
void dequantize_q8_1(const void* x, float* y, int64_t n);
void quantize_q8_1(const float* x, void* y, int64_t n);
void dequantize_q8_k(const void* x, float* y, int64_t n);
void quantize_q8_k(const float* x, void* y, int64_t n);

// ---- K-quants (q2_k.cpp .. q6_k.cpp); activations are Q8_K
void dequantize_q2_k(const void* x, float* y, int64_t n);
void quantize_q2_k(const float* x, void* y, int64_t n);
void quantize_rows_q2_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q2_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q3_k(const void* x, float* y, int64_t n);
void quantize_q3_k(const float* x, void* y, int64_t n);
void quantize_rows_q3_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q3_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q4_k(const void* x, float* y, int64_t n);
void quantize_q4_k(const float* x, void* y, int64_t n);
void quantize_rows_q4_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q4_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q5_k(const void* x, float* y, int64_t n);
void quantize_q5_k(const float* x, void* y, int64_t n);
void quantize_rows_q5_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q5_k_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_q6_k(const void* x, float* y, int64_t n);
void quantize_q6_k(const float* x, void* y, int64_t n);
void quantize_rows_q6_k(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_q6_k_q8_k(int64_t n, float* s, const void* x, const void* y);

// ---- non-linear 4-bit formats (iq4.cpp)
void dequantize_iq4_nl(const void* x, float* y, int64_t n);
void quantize_iq4_nl(const float* x, void* y, int64_t n);
void quantize_rows_iq4_nl(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq4_xs(const void* x, float* y, int64_t n);
void quantize_iq4_xs(const float* x, void* y, int64_t n);
void quantize_rows_iq4_xs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq4_xs_q8_k(int64_t n, float* s, const void* x, const void* y);

// ---- 2-bit codebook formats (iq2.cpp, iq2_quantize.cpp); activations are Q8_K. The quantizers
// take an importance vector (QuantizeRowsFn), required by IQ2_XXS and IQ2_XS; IQ2_S also has a
// from_float_ref (no importance), as llama.cpp's quantize_row_iq2_s_ref.
void dequantize_iq2_xxs(const void* x, float* y, int64_t n);
void quantize_rows_iq2_xxs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq2_xxs_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq2_xs(const void* x, float* y, int64_t n);
void quantize_rows_iq2_xs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq2_xs_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq2_s(const void* x, float* y, int64_t n);
void quantize_rows_iq2_s(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void quantize_iq2_s(const float* x, void* y, int64_t n);
void vec_dot_iq2_s_q8_k(int64_t n, float* s, const void* x, const void* y);
// ---- grid i-quants (iq3.cpp, iq1.cpp; codebooks in iq_grids_iq3_iq1.h); activations are Q8_K.
// quantize_rows_* are the importance-aware quantizers (QuantizeRowsFn, llama.cpp's quantize_iq3_xxs
// .. quantize_iq1_m); quantize_iq3_* are their importance-free one-row forms (quantize_row_*_ref).
// IQ1_S needs importance (llama.cpp asserts it); IQ1_M takes null as llama.cpp's ggml does.
// The dot products keep the integer contract with one extra exact step: IQ3_XXS's scales are
// (2s + 1) / 4 and IQ1's values carry a delta of 1/8, so the integer sums count quarters (IQ3_XXS)
// or eighths (IQ1_S, IQ1_M) and the float sum is multiplied by 0.25f / 0.125f at the end (a power
// of two: as exact as llama.cpp's own ordering, which applies the same factors).
void dequantize_iq3_xxs(const void* x, float* y, int64_t n);
void quantize_iq3_xxs(const float* x, void* y, int64_t n);
void quantize_rows_iq3_xxs(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq3_xxs_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq3_s(const void* x, float* y, int64_t n);
void quantize_iq3_s(const float* x, void* y, int64_t n);
void quantize_rows_iq3_s(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq3_s_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq1_s(const void* x, float* y, int64_t n);
void quantize_rows_iq1_s(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq1_s_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_iq1_m(const void* x, float* y, int64_t n);
void quantize_rows_iq1_m(const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance);
void vec_dot_iq1_m_q8_k(int64_t n, float* s, const void* x, const void* y);
// ---- MXFP4 (mxfp4.cpp), activations Q8_0; ternary TQ1_0 / TQ2_0 (tq.cpp), activations Q8_K
void dequantize_mxfp4(const void* x, float* y, int64_t n);
void quantize_mxfp4(const float* x, void* y, int64_t n);
void vec_dot_mxfp4_q8_0(int64_t n, float* s, const void* x, const void* y);
void dequantize_tq1_0(const void* x, float* y, int64_t n);
void quantize_tq1_0(const float* x, void* y, int64_t n);
void vec_dot_tq1_0_q8_k(int64_t n, float* s, const void* x, const void* y);
void dequantize_tq2_0(const void* x, float* y, int64_t n);
void quantize_tq2_0(const float* x, void* y, int64_t n);
void vec_dot_tq2_0_q8_k(int64_t n, float* s, const void* x, const void* y);

// Packed 6-bit scale/min pair `j` (0..7) of Q4_K/Q5_K's 12-byte scales field.
inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q3_K's 16 signed 6-bit scales (stored +32) unpacked from its 12-byte field, in -32..31.
void unpack_q3_k_scales(const uint8_t* packed, int8_t out[16]);

}  // namespace ox::quant
