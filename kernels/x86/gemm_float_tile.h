// gemm[F32] / gemm[F16] for many tokens, shared by AVX2 and AVX-512 (kernels/x86/{avx2,avx512}/
// gemm_float.cpp) through a vector type V: V::kLanes, V::Reg, V::zero(), V::load(const float*),
// V::store(float*, Reg), V::splat(float), V::fmadd(a, b, c) (a * b + c).
// Outer products, not dot products: the call's activations are packed once, k-major, into panels
// of kTok tokens (panel[k][token], zero past the last token), and a register tile of R weight rows
// x kTok tokens (R * kTok / kLanes accumulators) takes, per k, kTok / kLanes loads of the panel and
// R broadcasts of weights read straight from the rows, with no horizontal sums. Each cell sums its
// products in index order with one fused multiply-add per k (the reference, vec_dot_f32_f32 /
// vec_dot_f16_f16, rounds each product first: the results differ by float rounding only).
// Loop order: a block of R rows stays in L1 while every token panel (the call's activations, kept
// in L2 by matmul's token chunks) passes it; each weight is read from memory once per call.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/base/status.h"

namespace ox::kernels::x86 {

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Packs tokens [t0, t0 + nt) (nt <= kTok) of n floats each, rows `a_stride` bytes apart, into
// panel[k * kTok + t]; lanes past nt are zero. `load_row(src, dst, n)` converts one row to f32.
template <int kTok, class LoadRow>
inline void pack_panel(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t nt, float* panel, float* row,
                       LoadRow load_row) {
  if (nt < kTok) {
    for (int64_t i = 0; i < n * kTok; ++i) panel[i] = 0.0f;
  }
  for (int64_t t = 0; t < nt; ++t) {
    load_row(a + static_cast<uint64_t>(t) * a_stride, row, n);
    for (int64_t k = 0; k < n; ++k) panel[k * kTok + t] = row[k];
  }
}

// y[t * y_stride + r] for R rows (w[r]: n f32 each) x the first nt (<= kTok) tokens of a panel.
template <class V, int R, int kTok>
inline void outer_tile(int64_t n, const float* const* w, const float* panel, int64_t nt, float* y,
                       int64_t y_stride) {
  constexpr int kVecs = kTok / V::kLanes;
  typename V::Reg acc[R][kVecs];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) acc[r][v] = V::zero();
  }
  const float* p = panel;
  for (int64_t k = 0; k < n; ++k, p += kTok) {
    typename V::Reg a[kVecs];
    for (int v = 0; v < kVecs; ++v) a[v] = V::load(p + v * V::kLanes);
    for (int r = 0; r < R; ++r) {
      float wk;  // rows may sit at any byte offset (row views, tests' odd strides)
      std::memcpy(&wk, w[r] + k, sizeof(float));
      const typename V::Reg b = V::splat(wk);
      for (int v = 0; v < kVecs; ++v) acc[r][v] = V::fmadd(b, a[v], acc[r][v]);
    }
  }
  // Row r's results lie along the tokens: transposed through a small buffer (one store per cell
  // against n fused multiply-adds).
  alignas(64) float cells[R][kTok];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) V::store(&cells[r][v * V::kLanes], acc[r][v]);
  }
  for (int64_t t = 0; t < nt; ++t) {
    for (int r = 0; r < R; ++r) y[t * y_stride + r] = cells[r][t];
  }
}

// One thread's scratch (the packed panels, one converted activation row, converted weight rows),
// grown to the largest call and kept. Plain malloc and loops here, no std:: templates: this header
// is compiled with each ISA's flags, and a shared (COMDAT) instantiation of, say, a vector's fill
// could reach a caller on a CPU without that ISA.
struct FloatScratch {
  float* p = nullptr;
  size_t size = 0;
  FloatScratch() = default;
  FloatScratch(const FloatScratch&) = delete;
  FloatScratch& operator=(const FloatScratch&) = delete;
  ~FloatScratch() { std::free(p); }
  float* get(size_t n) {
    if (n > size) {
      std::free(p);
      p = static_cast<float*>(std::malloc(n * sizeof(float)));
      OX_CHECK(p != nullptr);
      size = n;
    }
    return p;
  }
};
struct FloatGemmScratch {
  FloatScratch panels, row, weights;
};
static inline FloatGemmScratch& float_gemm_scratch() {
  thread_local FloatGemmScratch s;
  return s;
}

// The driver: panels of kTok tokens (the last one kTok / 2 wide when that holds what is left),
// R-row blocks, then the last n_rows % R rows.
// load_act(src, dst, n) converts an activation row to f32; rows_f32(r, count) returns pointers to
// `count` f32 rows starting at weight row r (the rows themselves for F32, converted copies for F16),
// valid until its next call.
template <class V, int R, int kTok, class LoadAct, class RowsF32>
inline void outer_gemm(int64_t n, int64_t n_rows, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y,
                       int64_t y_stride, LoadAct load_act, RowsF32 rows_f32) {
  static_assert(kTok % (2 * V::kLanes) == 0, "two panel widths: kTok and kTok / 2");
  constexpr int kHalf = kTok / 2;
  FloatGemmScratch& s = float_gemm_scratch();
  // Panel p starts at token p * kTok; a last panel of at most kHalf tokens is packed kHalf wide.
  const int64_t n_full = n_tokens / kTok, rest = n_tokens % kTok;
  const bool half_last = rest > 0 && rest <= kHalf;
  const int64_t n_panels = n_full + (rest > 0 ? 1 : 0);
  const size_t need = static_cast<size_t>(n * (n_full * kTok + (rest == 0 ? 0 : half_last ? kHalf : kTok)));
  float* panels = s.panels.get(need);
  float* row = s.row.get(static_cast<size_t>(n));
  for (int64_t p = 0; p < n_panels; ++p) {
    const int64_t nt = min64(kTok, n_tokens - p * kTok);
    const uint8_t* src = a + static_cast<uint64_t>(p * kTok) * a_stride;
    float* dst = panels + p * kTok * n;
    if (p == n_full && half_last) {
      pack_panel<kHalf>(n, src, a_stride, nt, dst, row, load_act);
    } else {
      pack_panel<kTok>(n, src, a_stride, nt, dst, row, load_act);
    }
  }
  int64_t r0 = 0;
  for (; r0 + R <= n_rows; r0 += R) {
    const float* const* w = rows_f32(r0, int64_t{R});
    for (int64_t p = 0; p < n_panels; ++p) {
      const int64_t nt = min64(kTok, n_tokens - p * kTok);
      const float* panel = panels + p * kTok * n;
      float* yp = y + p * kTok * y_stride + r0;
      if (p == n_full && half_last) {
        outer_tile<V, R, kHalf>(n, w, panel, nt, yp, y_stride);
      } else {
        outer_tile<V, R, kTok>(n, w, panel, nt, yp, y_stride);
      }
    }
  }
  const int left = static_cast<int>(n_rows - r0);
  if (left > 0) {
    // The last rows go through R-row tiles with pointers repeated past the end (their cells are
    // computed and dropped): one code path, at most R - 1 wasted rows per call.
    const float* const* w = rows_f32(r0, static_cast<int64_t>(left));
    const float* rows[R];
    for (int r = 0; r < R; ++r) rows[r] = w[r < left ? r : left - 1];
    alignas(64) float spill[kTok * R];
    for (int64_t p = 0; p < n_panels; ++p) {
      const int64_t nt = min64(kTok, n_tokens - p * kTok);
      const float* panel = panels + p * kTok * n;
      if (p == n_full && half_last) {
        outer_tile<V, R, kHalf>(n, rows, panel, nt, spill, R);
      } else {
        outer_tile<V, R, kTok>(n, rows, panel, nt, spill, R);
      }
      float* yp = y + p * kTok * y_stride + r0;
      for (int64_t t = 0; t < nt; ++t) std::memcpy(yp + t * y_stride, spill + t * R, sizeof(float) * left);
    }
  }
}

// gemm[F32]: calls of fewer than kMinTokens tokens take `dot` (the ISA's vec_dot_f32) per cell,
// where an outer-product panel would mostly multiply zeros; the rest go through outer_gemm.
template <class V, int R, int kTok, int64_t kMinTokens>
inline void f32_gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                     uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride,
                     void (*dot)(int64_t, float*, const void*, const void*)) {
  if (n_tokens < kMinTokens) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t r = 0; r < n_rows; ++r) {
        dot(n, y + t * y_stride + r, w + static_cast<uint64_t>(r) * w_stride, a + static_cast<uint64_t>(t) * a_stride);
      }
    }
    return;
  }
  auto load_act = [](const uint8_t* src, float* dst, int64_t count) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
  };
  const float* rows[R];
  auto rows_f32 = [&](int64_t r0, int64_t count) {
    for (int64_t r = 0; r < count; ++r) {
      rows[r] = reinterpret_cast<const float*>(w + static_cast<uint64_t>(r0 + r) * w_stride);
    }
    return static_cast<const float* const*>(rows);
  };
  outer_gemm<V, R, kTok>(n, n_rows, a, a_stride, n_tokens, y, y_stride, load_act, rows_f32);
}

}  // namespace ox::kernels::x86
