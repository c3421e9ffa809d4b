// Scalar references of IQ2_XXS, IQ2_XS and IQ2_S (layouts in blocks.h): dequantization and the dot
// product with Q8_K activations. The three differ only in where an octet's codebook index, signs
// and 4-bit scale are stored; each has an `octet` reader and shares the rest. Quantizers are in
// iq2_quantize.cpp.
#include "core/base/status.h"
#include "core/quant/blocks.h"
#include "core/quant/iq2_grids.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

constexpr int kOctets = kQK_K / 8;

// One group of 8 elements: codebook entry, sign bits (bit j: element j negative), scale ls (0..15).
struct Octet {
  uint64_t grid;
  uint8_t signs;
  int ls;
};

uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

Octet octet(const BlockIQ2_XXS& b, int k) {
  const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * (k / 4);
  const uint32_t aux = load_u32(q + 4);
  return {kIQ2XXSGrid[q[k % 4]], kIQ2Signs[(aux >> (7 * (k % 4))) & 127], static_cast<int>(aux >> 28)};
}

// ls of octet k in IQ2_XS / IQ2_S: one nibble per 16 elements (two octets).
int nibble_scale(const uint8_t* scales, int k) { return (scales[k / 4] >> (4 * ((k / 2) % 2))) & 15; }

Octet octet(const BlockIQ2_XS& b, int k) {
  const uint16_t v = b.qs[k];
  return {kIQ2XSGrid[v & 511], kIQ2Signs[v >> 9], nibble_scale(b.scales, k)};
}

Octet octet(const BlockIQ2_S& b, int k) {
  const int index = b.qs[k] | ((b.qh[k / 4] << (8 - 2 * (k % 4))) & 0x300);
  return {kIQ2SGrid[index], b.qs[kQK_K / 8 + k], nibble_scale(b.scales, k)};
}

// x = (d * (0.5 + ls) * 0.25) * grid * sign, in llama.cpp's order of float operations (bit-exact).
template <class Block>
void dequantize(const void* vx, float* y, int64_t n) {
  OX_CHECK(n % kQK_K == 0);
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int k = 0; k < kOctets; ++k, y += 8) {
      const Octet o = octet(x[b], k);
      const float db = d * (0.5f + static_cast<float>(o.ls)) * 0.25f;
      for (int j = 0; j < 8; ++j) {
        const float v = db * static_cast<float>(iq2_grid_value(o.grid, j));
        y[j] = (o.signs >> j) & 1 ? -v : v;
      }
    }
  }
}

// Per block the exact integer sum of (2 ls + 1) * grid * sign * q8 (eighths of the dequantized
// scale d * (0.5 + ls) / 4), then one float term (d_w * d_a) * isum; the sum of terms times 1/8
// at the end (exact), as llama.cpp's ggml_vec_dot_iq2_*_q8_K_generic.
template <class Block>
void vec_dot(int64_t n, float* s, const void* vx, const void* vy) {
  OX_CHECK(n % kQK_K == 0);
  const Block* x = static_cast<const Block*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int32_t isum = 0;
    for (int k = 0; k < kOctets; ++k) {
      const Octet o = octet(x[b], k);
      const int8_t* q8 = y[b].qs + 8 * k;
      int32_t octet_sum = 0;
      for (int j = 0; j < 8; ++j) {
        const int v = iq2_grid_value(o.grid, j) * q8[j];
        octet_sum += (o.signs >> j) & 1 ? -v : v;
      }
      isum += (2 * o.ls + 1) * octet_sum;
    }
    sum += (fp16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  *s = 0.125f * sum;
}

}  // namespace

void dequantize_iq2_xxs(const void* x, float* y, int64_t n) { dequantize<BlockIQ2_XXS>(x, y, n); }
void dequantize_iq2_xs(const void* x, float* y, int64_t n) { dequantize<BlockIQ2_XS>(x, y, n); }
void dequantize_iq2_s(const void* x, float* y, int64_t n) { dequantize<BlockIQ2_S>(x, y, n); }

void vec_dot_iq2_xxs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot<BlockIQ2_XXS>(n, s, x, y); }
void vec_dot_iq2_xs_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot<BlockIQ2_XS>(n, s, x, y); }
void vec_dot_iq2_s_q8_k(int64_t n, float* s, const void* x, const void* y) { vec_dot<BlockIQ2_S>(n, s, x, y); }

}  // namespace ox::quant
