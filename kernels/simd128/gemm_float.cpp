// SIMD128 gemm tile of F16 weights against F16 activations. Both operands are converted to f32
// in scratch once (activations once per call, weights once per row pair), so each conversion is
// shared by every token or row of the tile instead of being redone per dot product (the
// conversion costs more than the multiply-adds); with one or two tokens a row serves one tile,
// and is converted in registers instead. Each cell sums exactly as vec_dot<F16> does
// (even / odd elements of each 8 in two f32x4 accumulators, lanes summed, then the scalar tail),
// so results are bit-identical to it: batched prefill and token-by-token decoding agree, and the
// F16 models keep the numerics they were checked against llama.cpp with. F32 has no tile: its
// vec_dot is already bound by the loads a tile would share, and F32 matrices are rare.
#include <array>
#include <utility>

#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels::simd128 {
namespace {

constexpr int kRows = 2;
constexpr int kTokens = 2;

// Eight fp16 values (one vector) as f32: even elements, odd elements.
inline void convert8(v128_t h, const Fp16Fast& c, v128_t* even, v128_t* odd) {
  if (c.any_special(h)) {  // an Inf or NaN: the long conversion
    *even = fp16x4_to_f32(wasm_v128_and(h, wasm_i32x4_splat(0xFFFF)));
    *odd = fp16x4_to_f32(wasm_u32x4_shr(h, 16));
  } else {
    *even = c.even(h);
    *odd = c.odd(h);
  }
}

// n fp16 values (any alignment) to f32 in vec_dot<F16>'s order: each 8 become its even elements
// then its odd ones (4 + 4 floats); the n % 8 left over follow in element order.
void convert_row(const uint8_t* src, int64_t n, float* dst, const Fp16Fast& c) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v128_t even, odd;
    convert8(load(src + 2 * i), c, &even, &odd);
    wasm_v128_store(dst + i, even);
    wasm_v128_store(dst + i + 4, odd);
  }
  for (; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = fp16(h);
  }
}

// Where a tile's weight rows come from: rows converted to f32 in scratch (n floats each, n apart),
// or fp16 rows converted in registers (w_stride bytes apart), which serve calls of one or two tokens
// (decode, attention's scores of one query row), where a converted row would serve one tile. Both
// give the tile the same values, so the same bits.
struct ConvertedRows {
  const float* w;
  int64_t n;
  void get(int r, int64_t i, v128_t* even, v128_t* odd) const {
    *even = load(w + r * n + i);
    *odd = load(w + r * n + i + 4);
  }
  float at(int r, int64_t k) const { return w[r * n + k]; }
};
struct Fp16Rows {
  const uint8_t* w;
  uint64_t w_stride;
  const Fp16Fast* c;
  void get(int r, int64_t i, v128_t* even, v128_t* odd) const { convert8(load(w + r * w_stride + 2 * i), *c, even, odd); }
  float at(int r, int64_t k) const {
    uint16_t h;
    std::memcpy(&h, w + r * w_stride + 2 * k, 2);
    return fp16(h);
  }
};

// y[t * y_stride + r] for an R x T tile (activation rows converted, n apart).
template <int R, int T, class Rows>
void f16_tile(int64_t n, const Rows& w, const float* a, float* y, int64_t y_stride) {
  v128_t even[R][T], odd[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) even[r][t] = odd[r][t] = wasm_f32x4_splat(0.0f);
  }
  int64_t i = 0;
#pragma clang loop unroll(disable)  // see tile_step in gemm_tile.h
  for (; i + 8 <= n; i += 8) {
    v128_t we[R], wo[R];
    for (int r = 0; r < R; ++r) w.get(r, i, &we[r], &wo[r]);
    for (int t = 0; t < T; ++t) {
      const v128_t ae = load(a + t * n + i), ao = load(a + t * n + i + 4);
      for (int r = 0; r < R; ++r) {
        even[r][t] = wasm_f32x4_add(even[r][t], wasm_f32x4_mul(we[r], ae));
        odd[r][t] = wasm_f32x4_add(odd[r][t], wasm_f32x4_mul(wo[r], ao));
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = hsum_f32(wasm_f32x4_add(even[r][t], odd[r][t]));
      for (int64_t k = i; k < n; ++k) sum += w.at(r, k) * a[t * n + k];
      y[t * y_stride + r] = sum;
    }
  }
}

// f16_tile<4, 1> of Fp16Rows with the four rows' lane sums done at once: the four sum vectors transposed,
// so that ((lane 0 + lane 1) + lane 2) + lane 3 of each row, hsum_f32's order, is three vector adds
// (at attention's head sizes, 48-128 values, four horizontal sums cost as much as the products).
void f16_rows4_one_token(int64_t n, const uint8_t* w, uint64_t w_stride, const float* a, float* y,
                         const Fp16Fast& c) {
  v128_t even[4], odd[4];
  for (int r = 0; r < 4; ++r) even[r] = odd[r] = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
#pragma clang loop unroll(disable)
  for (; i + 8 <= n; i += 8) {
    const v128_t ae = load(a + i), ao = load(a + i + 4);
    for (int r = 0; r < 4; ++r) {
      v128_t we, wo;
      convert8(load(w + r * w_stride + 2 * i), c, &we, &wo);
      even[r] = wasm_f32x4_add(even[r], wasm_f32x4_mul(we, ae));
      odd[r] = wasm_f32x4_add(odd[r], wasm_f32x4_mul(wo, ao));
    }
  }
  v128_t sum[4];
  for (int r = 0; r < 4; ++r) sum[r] = wasm_f32x4_add(even[r], odd[r]);
  const v128_t s01lo = wasm_i32x4_shuffle(sum[0], sum[1], 0, 4, 1, 5), s23lo = wasm_i32x4_shuffle(sum[2], sum[3], 0, 4, 1, 5);
  const v128_t s01hi = wasm_i32x4_shuffle(sum[0], sum[1], 2, 6, 3, 7), s23hi = wasm_i32x4_shuffle(sum[2], sum[3], 2, 6, 3, 7);
  const v128_t lane0 = wasm_i64x2_shuffle(s01lo, s23lo, 0, 2), lane1 = wasm_i64x2_shuffle(s01lo, s23lo, 1, 3);
  const v128_t lane2 = wasm_i64x2_shuffle(s01hi, s23hi, 0, 2), lane3 = wasm_i64x2_shuffle(s01hi, s23hi, 1, 3);
  const v128_t total = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(lane0, lane1), lane2), lane3);
  if (i == n) {
    wasm_v128_store(y, total);
    return;
  }
  float out[4];
  wasm_v128_store(out, total);
  for (int r = 0; r < 4; ++r) {
    for (int64_t k = i; k < n; ++k) {
      uint16_t h;
      std::memcpy(&h, w + r * w_stride + 2 * k, 2);
      out[r] += fp16(h) * a[k];
    }
    y[r] = out[r];
  }
}

using TileFn = void (*)(int64_t, const ConvertedRows&, const float*, float*, int64_t);

TileFn tile_fn(int64_t nr, int64_t nt) {
  static constexpr auto table = []<int... i>(std::integer_sequence<int, i...>) {
    return std::array<TileFn, sizeof...(i)>{f16_tile<i / kTokens + 1, i % kTokens + 1, ConvertedRows>...};
  }(std::make_integer_sequence<int, kRows * kTokens>{});
  return table[static_cast<size_t>((nr - 1) * kTokens + (nt - 1))];
}

}  // namespace

static void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                     uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  const Fp16Fast c = fp16_fast_consts();
  float* af = reinterpret_cast<float*>(gemm::scratch(gemm::Slot::kActs, (n * n_tokens + 3) / 4));
  for (int64_t t = 0; t < n_tokens; ++t) convert_row(a + t * a_stride, n, af + t * n, c);
  if (n_tokens <= kTokens) {  // each row serves one tile: converted in registers
    int64_t r0 = 0;
    if (n_tokens == 1) {
      for (; r0 + 4 <= n_rows; r0 += 4) f16_rows4_one_token(n, w + r0 * w_stride, w_stride, af, y + r0, c);
    }
    for (; r0 < n_rows; r0 += kRows) {
      const Fp16Rows rows{w + r0 * w_stride, w_stride, &c};
      const bool pair = r0 + kRows <= n_rows;
      if (n_tokens == 1) {
        pair ? f16_tile<kRows, 1>(n, rows, af, y + r0, y_stride) : f16_tile<1, 1>(n, rows, af, y + r0, y_stride);
      } else {
        pair ? f16_tile<kRows, kTokens>(n, rows, af, y + r0, y_stride)
             : f16_tile<1, kTokens>(n, rows, af, y + r0, y_stride);
      }
    }
    return;
  }
  float* wf = reinterpret_cast<float*>(gemm::scratch(gemm::Slot::kWeights, (n * kRows + 3) / 4));
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
    const int64_t nr = n_rows - r0 < kRows ? n_rows - r0 : kRows;
    for (int64_t r = 0; r < nr; ++r) convert_row(w + (r0 + r) * w_stride, n, wf + r * n, c);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokens) {
      const int64_t nt = n_tokens - t0 < kTokens ? n_tokens - t0 : kTokens;
      tile_fn(nr, nt)(n, ConvertedRows{wf, n}, af + t0 * n, y + t0 * y_stride + r0, y_stride);
    }
  }
}

void register_gemm_float(KernelTable& t) { t.gemm[static_cast<uint32_t>(DType::F16)] = gemm_f16; }

}  // namespace ox::kernels::simd128
