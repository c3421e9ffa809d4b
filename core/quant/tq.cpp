// Scalar references of the ternary formats TQ1_0 (1.6875 bits per weight: five trits per byte,
// base 3) and TQ2_0 (2.0625: four 2-bit codes per byte), super-blocks of 256 with one fp16 scale,
// x = d * t for t in {-1, 0, 1}; their dot products pair with Q8_K. The quantizers are llama.cpp's
// quantize_row_tq1_0_ref / quantize_row_tq2_0_ref: d = amax, t = round(x / amax) (half away from
// zero), made for weights already ternary (BitNet b1.58, TriLMs) rather than for general ones.
#include <cfloat>
#include <cmath>

#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

constexpr int kTQ1QsFirst = 32;   // bytes of qs holding 5 trits of elements 32 apart (0..159)
constexpr int kTQ1QsSecond = 16;  // then bytes holding 5 trits of elements 16 apart (160..239)
constexpr int kTQ1Qh = kQK_K / 64;  // then 4 trits per byte, elements 4 apart (240..255)

// Trit k (0 = most significant) of a TQ1_0 byte, 0..2. The byte is a fraction of 256 scaled from
// the base-3 number: multiplying by 3^k (mod 256) drops the k leading trits, and 3 times what is
// left, over 256, is the next one.
int tq1_trit(uint8_t byte, int k) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t shifted = static_cast<uint8_t>(byte * kPow3[k]);
  return (shifted * 3) >> 8;
}

// Trits t0..t(count-1), most significant first (padded with zero trits up to five), packed as
// ceil(256 * value / 243): the smallest byte whose fraction of 256 is at least value / 3^5.
uint8_t tq1_pack(const int* trits, int count) {
  int value = 0;
  for (int k = 0; k < 5; ++k) value = value * 3 + (k < count ? trits[k] : 0);
  return static_cast<uint8_t>((value * 256 + 242) / 243);
}

// lroundf(v) + 1 for |v| <= 1 (v = x / amax): -1, 0, 1 -> 0, 1, 2, halves rounded away from zero.
// NaN gives the zero trit.
int ternary_code(float v) { return v >= 0.5f ? 2 : (v <= -0.5f ? 0 : 1); }

// One super-block's codes round(x / amax) + 1 (element order) into `codes`; returns d = amax as
// fp16. 1/amax is taken as 0 where it would overflow (the fp16 d is 0 there anyway).
uint16_t ternary_codes(const float* x, int* codes) {
  float amax = 0.0f;
  for (int j = 0; j < kQK_K; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float id = amax >= FLT_MIN ? 1.0f / amax : 0.0f;
  for (int j = 0; j < kQK_K; ++j) codes[j] = ternary_code(x[j] * id);
  return fp16_saturate(amax);
}

// The 256 trits of a TQ1_0 block in element order (0..2).
void tq1_trits(const BlockTQ1_0& b, int* t) {
  for (int k = 0; k < 5; ++k) {
    for (int m = 0; m < kTQ1QsFirst; ++m) t[32 * k + m] = tq1_trit(b.qs[m], k);
    for (int m = 0; m < kTQ1QsSecond; ++m) t[160 + 16 * k + m] = tq1_trit(b.qs[kTQ1QsFirst + m], k);
  }
  for (int k = 0; k < 4; ++k) {
    for (int m = 0; m < kTQ1Qh; ++m) t[240 + 4 * k + m] = tq1_trit(b.qh[m], k);
  }
}

// The 256 codes of a TQ2_0 block in element order (0..3).
void tq2_codes(const BlockTQ2_0& b, int* q) {
  for (int j = 0; j < 2; ++j) {
    for (int l = 0; l < 4; ++l) {
      for (int m = 0; m < 32; ++m) q[128 * j + 32 * l + m] = (b.qs[32 * j + m] >> (2 * l)) & 3;
    }
  }
}

// x = d * (code - 1) over super-blocks whose codes (element order) `codes(block, out)` decodes.
template <typename Block, typename Codes>
void dequantize_ternary(const void* vx, float* y, int64_t n, Codes codes) {
  OX_CHECK(n % kQK_K == 0);
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int c[kQK_K];
    codes(x[b], c);
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK_K; ++j) y[b * kQK_K + j] = static_cast<float>(c[j] - 1) * d;
  }
}

// sum over blocks of (d * d_a) * sum_j (code_j - 1) * a_j, against Q8_K activations.
template <typename Block, typename Codes>
float dot_ternary(int64_t n, const void* vx, const void* vy, Codes codes) {
  OX_CHECK(n % kQK_K == 0);
  const Block* x = static_cast<const Block*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int c[kQK_K];
    codes(x[b], c);
    int32_t isum = 0;
    for (int j = 0; j < kQK_K; ++j) isum += (c[j] - 1) * y[b].qs[j];
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

}  // namespace

void dequantize_tq1_0(const void* x, float* y, int64_t n) { dequantize_ternary<BlockTQ1_0>(x, y, n, tq1_trits); }

void quantize_tq1_0(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  BlockTQ1_0* y = static_cast<BlockTQ1_0*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int t[kQK_K];
    y[b].d = ternary_codes(x + b * kQK_K, t);
    // Each byte gathers its trits from the element-order positions tq1_trits reads them back from.
    int group[5];
    for (int m = 0; m < kTQ1QsFirst; ++m) {
      for (int k = 0; k < 5; ++k) group[k] = t[32 * k + m];
      y[b].qs[m] = tq1_pack(group, 5);
    }
    for (int m = 0; m < kTQ1QsSecond; ++m) {
      for (int k = 0; k < 5; ++k) group[k] = t[160 + 16 * k + m];
      y[b].qs[kTQ1QsFirst + m] = tq1_pack(group, 5);
    }
    for (int m = 0; m < kTQ1Qh; ++m) {
      for (int k = 0; k < 4; ++k) group[k] = t[240 + 4 * k + m];
      y[b].qh[m] = tq1_pack(group, 4);
    }
  }
}

void vec_dot_tq1_0_q8_k(int64_t n, float* s, const void* x, const void* y) {
  *s = dot_ternary<BlockTQ1_0>(n, x, y, tq1_trits);
}

void dequantize_tq2_0(const void* x, float* y, int64_t n) { dequantize_ternary<BlockTQ2_0>(x, y, n, tq2_codes); }

void quantize_tq2_0(const float* x, void* vy, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  BlockTQ2_0* y = static_cast<BlockTQ2_0*>(vy);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int q[kQK_K];
    y[b].d = ternary_codes(x + b * kQK_K, q);
    for (int j = 0; j < 2; ++j) {  // the positions tq2_codes reads back
      for (int m = 0; m < 32; ++m) {
        int byte = 0;
        for (int l = 0; l < 4; ++l) byte |= q[128 * j + 32 * l + m] << (2 * l);
        y[b].qs[32 * j + m] = static_cast<uint8_t>(byte);
      }
    }
  }
}

void vec_dot_tq2_0_q8_k(int64_t n, float* s, const void* x, const void* y) {
  *s = dot_ternary<BlockTQ2_0>(n, x, y, tq2_codes);
}

}  // namespace ox::quant
