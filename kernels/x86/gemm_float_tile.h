// gemm[F32] for AVX2 and AVX-512 (kernels/x86/{avx2,avx512}/gemm_float.cpp) through a vector type V:
// V::kLanes, V::Reg, V::zero(), V::loadu(const uint8_t*) (kLanes floats at any alignment),
// V::fmadd(a, b, c) (a * b + c, fused), V::add, V::hsum(Reg), V::pin(Reg&), V::kMaskedTail and, where it is true,
// V::load_first(p, count) (the first count < kLanes floats, zeros after).
// Each cell does what the ISA's vec_dot<DType::F32> does, operation for operation (four accumulators over
// 4 * kLanes columns, the rest kLanes at a time into the first, the last n % kLanes into the second
// (masked) or added after the sum (scalar), then hsum((a0 + a1) + (a2 + a3))), so the tile gives
// vec_dot<DType::F32>'s bits: a prompt in one batch and one token at a time agree exactly, and F32 models
// keep the numerics they were checked against llama.cpp with. A register tile of R weight rows x T
// tokens (4 * R * T accumulators) loads each weight vector once for T tokens and each activation
// vector once for R rows, where vec_dot per cell loads both for one product.
#pragma once

#include <cstdint>
#include <cstring>

namespace ox::kernels::x86 {

// y[t * y_stride + r] for rows w[0..R) and tokens a[0..T), n floats each (any alignment).
template <class V, int R, int T>
inline void f32_dot_tile(int64_t n, const uint8_t* const* w, const uint8_t* const* a, float* y, int64_t y_stride) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  constexpr uint64_t kBytes = L * sizeof(float);
  Reg acc[4][R][T];
  for (int j = 0; j < 4; ++j) {
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) acc[j][r][t] = V::zero();
    }
  }
  // acc[J] += w[i..i + L) * a[i..i + L) for every cell, from byte offset off (J a constant: a
  // run-time index would keep the accumulators in memory).
  auto step = [&]<int J>(uint64_t off) {
    // The T activation vectors in registers, each weight vector loaded once for them (V::pin, an
    // empty asm, keeps each load in its register: GCC otherwise reloads it for every multiply-add).
    Reg av[T];
    for (int t = 0; t < T; ++t) {
      av[t] = V::loadu(a[t] + off);
      V::pin(av[t]);
    }
    for (int r = 0; r < R; ++r) {
      Reg wv = V::loadu(w[r] + off);
      V::pin(wv);
      for (int t = 0; t < T; ++t) acc[J][r][t] = V::fmadd(wv, av[t], acc[J][r][t]);
    }
  };
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    const uint64_t off = static_cast<uint64_t>(i) * sizeof(float);
    step.template operator()<0>(off);
    step.template operator()<1>(off + kBytes);
    step.template operator()<2>(off + 2 * kBytes);
    step.template operator()<3>(off + 3 * kBytes);
  }
  for (; i + L <= n; i += L) step.template operator()<0>(static_cast<uint64_t>(i) * sizeof(float));
  if constexpr (V::kMaskedTail) {
    if (i < n) {
      const uint64_t off = static_cast<uint64_t>(i) * sizeof(float);
      const int count = static_cast<int>(n - i);
      for (int t = 0; t < T; ++t) {
        const Reg av = V::load_first(a[t] + off, count);
        for (int r = 0; r < R; ++r) acc[1][r][t] = V::fmadd(V::load_first(w[r] + off, count), av, acc[1][r][t]);
      }
      i = n;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = V::hsum(V::add(V::add(acc[0][r][t], acc[1][r][t]), V::add(acc[2][r][t], acc[3][r][t])));
      for (int64_t k = i; k < n; ++k) {
        float wk, ak;
        std::memcpy(&wk, w[r] + k * sizeof(float), sizeof(float));
        std::memcpy(&ak, a[t] + k * sizeof(float), sizeof(float));
        sum += wk * ak;
      }
      y[t * y_stride + r] = sum;
    }
  }
}

// The whole product: blocks of R rows x T tokens, the last n_tokens % T tokens one at a time, the
// last n_rows % R rows one at a time. Rows of a block stay in L1 while every token passes them
// (matmul hands a thread its row range with at most kActChunkBytes of activations per call).
template <class V, int R, int T>
inline void f32_gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                     uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  auto rows = [&]<int RR>(int64_t r0) {
    const uint8_t* wr[RR];
    for (int k = 0; k < RR; ++k) wr[k] = w + static_cast<uint64_t>(r0 + k) * w_stride;
    const uint8_t* at[T];
    int64_t t = 0;
    for (; t + T <= n_tokens; t += T) {
      for (int k = 0; k < T; ++k) at[k] = a + static_cast<uint64_t>(t + k) * a_stride;
      f32_dot_tile<V, RR, T>(n, wr, at, y + t * y_stride + r0, y_stride);
    }
    for (; t < n_tokens; ++t) {
      at[0] = a + static_cast<uint64_t>(t) * a_stride;
      f32_dot_tile<V, RR, 1>(n, wr, at, y + t * y_stride + r0, y_stride);
    }
  };
  int64_t r = 0;
  for (; r + R <= n_rows; r += R) rows.template operator()<R>(r);
  for (; r < n_rows; ++r) rows.template operator()<1>(r);
}

}  // namespace ox::kernels::x86
