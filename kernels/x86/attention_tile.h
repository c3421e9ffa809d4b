// Attention's kernels over an F16 cache, shared by AVX2 and AVX-512 (kernels/x86/{avx2,avx512}/
// attention.cpp) through a vector type V each defines: V::kLanes, V::Reg, V::zero(), V::load(const
// float*), V::store(float*, Reg), V::splat(float), V::load_f16(const uint16_t*), V::fmadd(a, b, c)
// (a * b + c), V::hsum(Reg). f16_gemm / f16_tile: the tile of gemm[F16]; accumulate: attn_accumulate.
// R key rows x T query rows of accumulators: each converted key row serves T queries and each
// query R keys. Tails of n are added in scalar; y[t * y_stride + r] = row r . query t.
#pragma once

#include <cstdint>

namespace ox::kernels::x86 {

template <class V, int R, int T>
inline void f16_tile(int64_t n, const uint16_t* const* w, const uint16_t* const* a, float* y, int64_t y_stride,
                     float (*fp16)(uint16_t)) {
  typename V::Reg acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = V::zero();
  }
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    typename V::Reg wv[R];
    for (int r = 0; r < R; ++r) wv[r] = V::load_f16(w[r] + i);
    for (int t = 0; t < T; ++t) {
      const typename V::Reg av = V::load_f16(a[t] + i);
      for (int r = 0; r < R; ++r) acc[r][t] = V::fmadd(wv[r], av, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = V::hsum(acc[r][t]);
      for (int64_t k = i; k < n; ++k) sum += fp16(w[r][k]) * fp16(a[t][k]);
      y[t * y_stride + r] = sum;
    }
  }
}

// gemm[F16] over n_rows key rows (w, w_stride bytes apart) and n_tokens query rows (a): blocks of
// R rows x 4 tokens, then single rows / tokens.
template <class V, int R>
inline void f16_gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                     uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride, float (*fp16)(uint16_t)) {
  auto row_ptr = [&](int64_t r) { return reinterpret_cast<const uint16_t*>(w + static_cast<uint64_t>(r) * w_stride); };
  auto tok_ptr = [&](int64_t t) { return reinterpret_cast<const uint16_t*>(a + static_cast<uint64_t>(t) * a_stride); };
  auto rows = [&]<int RR>(int64_t r0) {
    const uint16_t* wr[RR];
    for (int k = 0; k < RR; ++k) wr[k] = row_ptr(r0 + k);
    int64_t t = 0;
    const uint16_t* at[4];
    for (; t + 4 <= n_tokens; t += 4) {
      for (int k = 0; k < 4; ++k) at[k] = tok_ptr(t + k);
      f16_tile<V, RR, 4>(n, wr, at, y + t * y_stride + r0, y_stride, fp16);
    }
    for (; t < n_tokens; ++t) {
      at[0] = tok_ptr(t);
      f16_tile<V, RR, 1>(n, wr, at, y + t * y_stride + r0, y_stride, fp16);
    }
  };
  int64_t r = 0;
  for (; r + R <= n_rows; r += R) rows.template operator()<R>(r);
  for (; r < n_rows; ++r) rows.template operator()<1>(r);
}

// acc[d] += sum_j w[j] * v[j * v_stride + d]: 4 registers of acc kept across all n positions,
// then 1; returns how many of the dv columns it did (the caller finishes the rest).
template <class V>
inline int64_t accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  constexpr int64_t L = V::kLanes;
  int64_t d = 0;
  for (; d + 4 * L <= dv; d += 4 * L) {
    typename V::Reg a0 = V::load(acc + d), a1 = V::load(acc + d + L), a2 = V::load(acc + d + 2 * L),
                    a3 = V::load(acc + d + 3 * L);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) {
      const typename V::Reg wj = V::splat(w[j]);
      a0 = V::fmadd(wj, V::load(vj), a0);
      a1 = V::fmadd(wj, V::load(vj + L), a1);
      a2 = V::fmadd(wj, V::load(vj + 2 * L), a2);
      a3 = V::fmadd(wj, V::load(vj + 3 * L), a3);
    }
    V::store(acc + d, a0);
    V::store(acc + d + L, a1);
    V::store(acc + d + 2 * L, a2);
    V::store(acc + d + 3 * L, a3);
  }
  for (; d + L <= dv; d += L) {
    typename V::Reg a0 = V::load(acc + d);
    const float* vj = v + d;
    for (int64_t j = 0; j < n; ++j, vj += v_stride) a0 = V::fmadd(V::splat(w[j]), V::load(vj), a0);
    V::store(acc + d, a0);
  }
  return d;
}

}  // namespace ox::kernels::x86
