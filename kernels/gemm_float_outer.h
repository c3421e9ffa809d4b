// gemm_wide[F32], written once over an ISA's vector type V (kernels/x86/{avx2,avx512}/gemm_float.cpp,
// kernels/simd128/gemm_wide.cpp, kernels/neon/gemm_wide.cpp): V::kLanes, V::Reg, V::zero(),
// V::load(const float*), V::loadu(const uint8_t*) (any alignment), V::store(float*, Reg),
// V::splat(float), V::fmadd(a, b, c) (a * b + c: fused where the ISA has it, a product then a sum
// in SIMD128) and V::transpose(Reg r[kLanes]) (a kLanes x kLanes transpose: r[j][i] = old r[i][j]).
// Outer products, not dot products: the call's activations are packed once, k-major, into panels
// of kTok tokens (panel[k * kTok + t], zero past the last token), and a register tile of R weight
// rows x kTok tokens (R * kTok / kLanes accumulators) takes, per k, kTok / kLanes loads of the panel
// and R broadcasts of weights read straight from the rows, with no horizontal sums. Each cell sums
// its products in index order, one V::fmadd per k: not vec_dot_f32's order (four accumulators of
// kLanes columns each), so the results differ from it by float rounding. That is
// why this is KernelTable::gemm_wide, taken only by passes with no one-token path to agree with
// (OpContext::order_free: encoders' embedding passes); reference: vec_dot_f32_f32 within rounding.
// Loop order: a block of R rows stays in L1 while every token panel of the call (kept in L2 by
// matmul's token chunks) passes it, so each weight is read from memory once per call.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/base/status.h"
#include "core/quant/traits.h"

namespace ox::kernels::wide {

// Every template here takes the ISA's vector type V, which lives in an anonymous namespace: each
// ISA's file gets its own instantiations (a shared COMDAT one, built with AVX-512 flags, could
// otherwise reach a caller on a CPU without AVX-512; NEON's plain and +dotprod folders likewise).

// Packs tokens [0, nt) (nt <= kTok) of n floats each, rows `a_stride` bytes apart (any alignment),
// into panel[k * kTok + t]; lanes past nt are zero. Square blocks of kLanes tokens x kLanes columns
// go through registers (V::transpose); a scalar copy, whose every store lands on another line of a
// panel larger than L1, made packing a third of the product's time.
template <class V, int kTok>
inline void pack_panel(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t nt, float* panel) {
  constexpr int L = V::kLanes;
  if (nt < kTok) {
    for (int64_t i = 0; i < n * kTok; ++i) panel[i] = 0.0f;
  }
  for (int64_t t0 = 0; t0 < nt; t0 += L) {
    const int count = static_cast<int>(nt - t0 < L ? nt - t0 : L);
    const uint8_t* rows[L];
    for (int i = 0; i < count; ++i) rows[i] = a + static_cast<uint64_t>(t0 + i) * a_stride;
    int64_t k = 0;
    for (; k + L <= n; k += L) {
      const uint64_t off = static_cast<uint64_t>(k) * sizeof(float);
      typename V::Reg r[L];
      for (int i = 0; i < L; ++i) r[i] = i < count ? V::loadu(rows[i] + off) : V::zero();
      V::transpose(r);  // r[j][i] = token t0 + i's column k + j
      for (int j = 0; j < L; ++j) V::store(panel + (k + j) * kTok + t0, r[j]);
    }
    for (; k < n; ++k) {
      for (int i = 0; i < count; ++i) {
        std::memcpy(&panel[k * kTok + t0 + i], rows[i] + static_cast<uint64_t>(k) * sizeof(float), sizeof(float));
      }
    }
  }
}

// Columns [0, count) of a register tile: acc[r][v] += w[r][k] * the panel's tokens (p[k * kTok ..]),
// w[r] a row of floats at any alignment, one V::fmadd per k in index order.
template <class V, int R, int kTok>
inline void outer_steps(typename V::Reg (&acc)[R][kTok / V::kLanes], const uint8_t* const* w, const float* p,
                        int64_t count) {
  constexpr int kVecs = kTok / V::kLanes;
  // The unroll pragmas keep the accumulators in registers: GCC left NEON's 6 x 16 tile as loops
  // over arrays in memory without them.
  for (int64_t k = 0; k < count; ++k, p += kTok) {
    typename V::Reg a[kVecs];
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) a[v] = V::load(p + v * V::kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      float wk;
      std::memcpy(&wk, w[r] + k * sizeof(float), sizeof(float));
      const typename V::Reg b = V::splat(wk);
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) acc[r][v] = V::fmadd(b, a[v], acc[r][v]);
    }
  }
}

// cells[r * kTok + t] for R rows (w[r]: n floats each, any alignment) x the kTok tokens of a panel:
// the register tile's accumulators, stored.
template <class V, int R, int kTok>
inline void outer_cells(int64_t n, const uint8_t* const* w, const float* panel, float* cells) {
  constexpr int kVecs = kTok / V::kLanes;
  typename V::Reg acc[R][kVecs];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) acc[r][v] = V::zero();
  }
  outer_steps<V, R, kTok>(acc, w, panel, n);
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) V::store(cells + r * kTok + v * V::kLanes, acc[r][v]);
  }
}

// y[t * y_stride + r] for R rows x the first nt (<= kTok) tokens of a panel. A V may compute a
// tile shape itself (V::tile<R, kTok>(n, w, panel, cells), as outer_cells): SIMD128's relaxed-SIMD
// slot for its main tile.
template <class V, int R, int kTok>
inline void outer_tile(int64_t n, const uint8_t* const* w, const float* panel, int64_t nt, float* y,
                       int64_t y_stride) {
  // Row r's results lie along the tokens: transposed through a small buffer (one store per cell
  // against n multiply-adds).
  alignas(64) float cells[R][kTok];
  if constexpr (requires { V::template tile<R, kTok>(n, w, panel, &cells[0][0]); }) {
    V::template tile<R, kTok>(n, w, panel, &cells[0][0]);
  } else {
    outer_cells<V, R, kTok>(n, w, panel, &cells[0][0]);
  }
  for (int64_t t = 0; t < nt; ++t) {
    for (int r = 0; r < R; ++r) y[t * y_stride + r] = cells[r][t];
  }
}

// The packed panels of one thread, grown to the largest call and kept (plain malloc: no std::
// container whose members would be shared between the ISAs' files).
template <class V>
struct PanelScratch {
  float* p = nullptr;
  size_t size = 0;
  PanelScratch() = default;
  PanelScratch(const PanelScratch&) = delete;
  PanelScratch& operator=(const PanelScratch&) = delete;
  ~PanelScratch() { std::free(p); }
  float* get(size_t count) {
    if (count > size) {
      std::free(p);
      p = static_cast<float*>(std::malloc(count * sizeof(float)));
      OX_CHECK(p != nullptr);
      size = count;
    }
    return p;
  }
};

// Rows [r0, r0 + RR) of w against every panel: tile by tile, the last panel kTok / 2 wide when
// `half_last`.
template <class V, int RR, int kTok>
inline void outer_rows(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t r0, const float* panels,
                       int64_t n_panels, bool half_last, int64_t n_tokens, float* y, int64_t y_stride) {
  const uint8_t* rows[RR];
  for (int r = 0; r < RR; ++r) rows[r] = w + static_cast<uint64_t>(r0 + r) * w_stride;
  for (int64_t p = 0; p < n_panels; ++p) {
    const int64_t t0 = p * kTok, nt = n_tokens - t0 < kTok ? n_tokens - t0 : kTok;
    const float* panel = panels + t0 * n;
    float* yp = y + t0 * y_stride + r0;
    if (p == n_panels - 1 && half_last) {
      outer_tile<V, RR, kTok / 2>(n, rows, panel, nt, yp, y_stride);
    } else {
      outer_tile<V, RR, kTok>(n, rows, panel, nt, yp, y_stride);
    }
  }
}

// A call's activations as panels of kTok tokens (the last one kTok / 2 wide when that holds what is
// left), panel p starting at float p * kTok * n.
struct Panels {
  const float* data;
  int64_t n_panels;
  bool half_last;
};
template <class V, int kTok>
inline Panels pack_panels(PanelScratch<V>& scratch, int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens) {
  static_assert(kTok % (2 * V::kLanes) == 0, "two panel widths: kTok and kTok / 2");
  constexpr int kHalf = kTok / 2;
  const int64_t n_full = n_tokens / kTok, rest = n_tokens % kTok;
  const bool half_last = rest > 0 && rest <= kHalf;
  const int64_t n_panels = n_full + (rest > 0 ? 1 : 0);
  float* panels = scratch.get(static_cast<size_t>(n * n_panels * kTok));
  for (int64_t p = 0; p < n_panels; ++p) {
    const int64_t t0 = p * kTok, nt = n_tokens - t0 < kTok ? n_tokens - t0 : kTok;
    const uint8_t* src = a + static_cast<uint64_t>(t0) * a_stride;
    if (p == n_full && half_last) {
      pack_panel<V, kHalf>(n, src, a_stride, nt, panels + t0 * n);
    } else {
      pack_panel<V, kTok>(n, src, a_stride, nt, panels + t0 * n);
    }
  }
  return {panels, n_panels, half_last};
}

// Every row against packed panels: R-row blocks, then the last rows in blocks of R / 2, R / 4, ...
// down to one.
template <class V, int R, int kTok>
inline void rows_over_panels(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const Panels& p,
                             int64_t n_tokens, float* y, int64_t y_stride) {
  int64_t r = 0;
  auto blocks = [&]<int RR>() {
    for (; r + RR <= n_rows; r += RR) {
      outer_rows<V, RR, kTok>(n, w, w_stride, r, p.data, p.n_panels, p.half_last, n_tokens, y, y_stride);
    }
  };
  blocks.template operator()<R>();
  if constexpr (R / 2 >= 1) blocks.template operator()<R / 2>();
  if constexpr (R / 4 >= 1) blocks.template operator()<R / 4>();
  if constexpr (R / 8 >= 1) blocks.template operator()<R / 8>();
  blocks.template operator()<1>();
}

// The whole product.
template <class V, int R, int kTok>
inline void outer_gemm(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                       uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  thread_local PanelScratch<V> scratch;
  const Panels p = pack_panels<V, kTok>(scratch, n, a, a_stride, n_tokens);
  rows_over_panels<V, R, kTok>(n, w, w_stride, n_rows, p, n_tokens, y, y_stride);
}

// vec_dot per cell: what gemm_wide takes for fewer than 4 tokens, where a half panel would mostly
// multiply zeros, on an ISA with no tile to hand them to (SIMD128 and NEON F32; every half format).
// A template on V like the rest, so that each ISA's file keeps its own copy.
template <class V>
inline void dots_per_cell(VecDotFn dot, int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                          const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < n_rows; ++r) dot(n, y + t * y_stride + r, w + r * w_stride, a + t * a_stride);
  }
}

// A half product's activations as f32 panels: converted through `to_f32` (exact) into `acts`, then
// packed into `panels`.
template <class V, int kTok>
inline Panels pack_half_panels(ToFloatFn to_f32, PanelScratch<V>& acts, PanelScratch<V>& panels, int64_t n,
                               const uint8_t* a, uint64_t a_stride, int64_t n_tokens) {
  float* af = acts.get(static_cast<size_t>(n * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) to_f32(a + static_cast<uint64_t>(t) * a_stride, af + t * n, n);
  const uint64_t f32_stride = static_cast<uint64_t>(n) * sizeof(float);
  return pack_panels<V, kTok>(panels, n, reinterpret_cast<const uint8_t*>(af), f32_stride, n_tokens);
}

// gemm_wide of half-precision weights and activations (F16, BF16; matmul hands them activations in
// the weights' format): both to f32 through `to_f32` (the ISA's to_float of that format, exact), the
// activations once per call (converted, then packed into panels) and the weights kHalfRows rows at
// a time, each block over those panels; fewer than 4 tokens `dot` (its vec_dot) per cell.
// A product of two halves is exact in f32, so only the order of the sums differs from vec_dot's: the
// same rounding as F32's.
constexpr int64_t kHalfRows = 64;
template <class V, int R, int kTok>
inline void outer_gemm_half(ToFloatFn to_f32, VecDotFn dot, int64_t n, const uint8_t* w, uint64_t w_stride,
                            int64_t n_rows, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y,
                            int64_t y_stride) {
  if (n_tokens < 4) {
    dots_per_cell<V>(dot, n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  thread_local PanelScratch<V> acts, panels, rows;
  const uint64_t f32_stride = static_cast<uint64_t>(n) * sizeof(float);
  const Panels p = pack_half_panels<V, kTok>(to_f32, acts, panels, n, a, a_stride, n_tokens);
  float* wf = rows.get(static_cast<size_t>(n * kHalfRows));
  for (int64_t r0 = 0; r0 < n_rows; r0 += kHalfRows) {
    const int64_t nr = n_rows - r0 < kHalfRows ? n_rows - r0 : kHalfRows;
    for (int64_t r = 0; r < nr; ++r) to_f32(w + static_cast<uint64_t>(r0 + r) * w_stride, wf + r * n, n);
    rows_over_panels<V, R, kTok>(n, reinterpret_cast<const uint8_t*>(wf), f32_stride, nr, p, n_tokens, y + r0, y_stride);
  }
}

// outer_gemm_half's product with the weights converted inside the register tile, kHalfChunk columns
// of its R rows at a time into an L1 buffer, while the halves kPrefetchChunks chunks ahead are
// prefetched: the weights stream from memory under the multiply-adds. outer_gemm_half converts
// kHalfRows whole rows before multiplying them, a phase that waits on memory with nothing to
// overlap it, and matmul's token chunks (32 tokens of a 3072-wide F16 row) make most calls a single
// panel, so nothing amortises it: a bge-base F16 sentence (29 tokens, 2 threads, AVX-512) took
// 22.3 ms that way and 15.0 ms this way (without the prefetch, 17.5). Each panel converts its rows
// again: one conversion per 2 * kTok / kLanes multiply-adds. The same sums in the same order as
// outer_gemm_half (the conversion is exact), so the same bits. x86's tables take it; SIMD128 and
// NEON keep outer_gemm_half (wasm has no prefetch).
constexpr int64_t kHalfChunk = 32;
constexpr int64_t kPrefetchChunks = 4;
template <class V, class Half, int R, int kTok>
inline void outer_cells_half(ToFloatFn to_f32, int64_t n, const uint8_t* const* w, uint64_t w_stride,
                             const float* panel, float* cells) {
  constexpr int kVecs = kTok / V::kLanes;
  constexpr uint64_t kHalfBytes = 2;
  typename V::Reg acc[R][kVecs];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) acc[r][v] = V::zero();
  }
  alignas(64) float buf[R][kHalfChunk];
  const uint8_t* buf_rows[R];
  for (int r = 0; r < R; ++r) buf_rows[r] = reinterpret_cast<const uint8_t*>(buf[r]);
  for (int64_t k0 = 0; k0 < n; k0 += kHalfChunk) {
    const int64_t kc = n - k0 < kHalfChunk ? n - k0 : kHalfChunk;
    if (kc == kHalfChunk) {
      // Inline (Half::load: kLanes halves to floats), so the accumulators stay in registers.
      for (int r = 0; r < R; ++r) {
        const uint8_t* src = w[r] + static_cast<uint64_t>(k0) * kHalfBytes;
#pragma GCC unroll 8
        for (int64_t j = 0; j < kHalfChunk; j += V::kLanes) V::store(&buf[r][j], Half::load(src + j * kHalfBytes));
      }
    } else {
      for (int r = 0; r < R; ++r) to_f32(w[r] + static_cast<uint64_t>(k0) * kHalfBytes, buf[r], kc);
    }
    // The next chunk of each row, or after the last one the first chunk of the R rows below (the
    // next tile's, where rows come in order; a prefetch past the matrix is only a hint).
    const int64_t ahead = k0 + kPrefetchChunks * kHalfChunk;
    const uint64_t next = ahead < n ? static_cast<uint64_t>(ahead) * kHalfBytes
                                    : R * w_stride + static_cast<uint64_t>(ahead - n) * kHalfBytes;
    for (int r = 0; r < R; ++r) {
      for (uint64_t b = 0; b < kHalfChunk * kHalfBytes; b += 64) __builtin_prefetch(w[r] + next + b);
    }
    outer_steps<V, R, kTok>(acc, buf_rows, panel + k0 * kTok, kc);
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < kVecs; ++v) V::store(cells + r * kTok + v * V::kLanes, acc[r][v]);
  }
}

template <class V, class Half, int R, int kTok>
inline void outer_tile_half(ToFloatFn to_f32, int64_t n, const uint8_t* const* w, uint64_t w_stride,
                            const float* panel, int64_t nt, float* y, int64_t y_stride) {
  alignas(64) float cells[R][kTok];
  outer_cells_half<V, Half, R, kTok>(to_f32, n, w, w_stride, panel, &cells[0][0]);
  for (int64_t t = 0; t < nt; ++t) {
    for (int r = 0; r < R; ++r) y[t * y_stride + r] = cells[r][t];
  }
}

template <class V, class Half, int R, int kTok>
inline void outer_gemm_half_streamed(ToFloatFn to_f32, VecDotFn dot, int64_t n, const uint8_t* w, uint64_t w_stride,
                                     int64_t n_rows, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y,
                                     int64_t y_stride) {
  if (n_tokens < 4) {
    dots_per_cell<V>(dot, n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
    return;
  }
  thread_local PanelScratch<V> acts, panels;
  const Panels p = pack_half_panels<V, kTok>(to_f32, acts, panels, n, a, a_stride, n_tokens);
  int64_t r = 0;
  auto blocks = [&]<int RR>() {
    for (; r + RR <= n_rows; r += RR) {
      const uint8_t* rows[RR];
      for (int i = 0; i < RR; ++i) rows[i] = w + static_cast<uint64_t>(r + i) * w_stride;
      for (int64_t q = 0; q < p.n_panels; ++q) {
        const int64_t t0 = q * kTok, nt = n_tokens - t0 < kTok ? n_tokens - t0 : kTok;
        const float* panel = p.data + t0 * n;
        float* yp = y + t0 * y_stride + r;
        if (q == p.n_panels - 1 && p.half_last) {
          outer_tile_half<V, Half, RR, kTok / 2>(to_f32, n, rows, w_stride, panel, nt, yp, y_stride);
        } else {
          outer_tile_half<V, Half, RR, kTok>(to_f32, n, rows, w_stride, panel, nt, yp, y_stride);
        }
      }
    }
  };
  blocks.template operator()<R>();
  // A thread's rows come in multiples of 16 (matmul's granule): 12-row tiles leave 4 or 8.
  if constexpr (R == 12) {
    blocks.template operator()<8>();
    blocks.template operator()<4>();
  } else {
    if constexpr (R / 2 >= 1) blocks.template operator()<R / 2>();
    if constexpr (R / 4 >= 1) blocks.template operator()<R / 4>();
    if constexpr (R / 8 >= 1) blocks.template operator()<R / 8>();
  }
  blocks.template operator()<1>();
}

// gemm_wide[F32] for an ISA with no F32 tile (SIMD128, NEON; `dot`: its vec_dot_f32).
template <class V, int R, int kTok>
inline void outer_gemm_or_dots(VecDotFn dot, int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows,
                               const uint8_t* a, uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride) {
  if (n_tokens < 4) {
    dots_per_cell<V>(dot, n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  } else {
    outer_gemm<V, R, kTok>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride);
  }
}

}  // namespace ox::kernels::wide
