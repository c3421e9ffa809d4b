// The one kernel interface. The scalar table (built from core/quant's references) fills every
// slot; each ISA's patch() overwrites the slots it implements. Callers hold a
// `const KernelTable*` chosen once; hot loops never test CPU features.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox::kernels {

// A tile of a matrix product: n_rows weight rows against n_tokens activation rows,
//   y[t * y_stride + r] = vec_dot(n, w + r * w_stride, a + t * a_stride)   for r < n_rows, t < n_tokens.
// Kernels keep a small block of rows x tokens in registers so every weight block they load is
// used for several tokens (prefill) and every activation block for several rows (decode, where
// it also amortises the per-row horizontal sum and call). Any n_rows, n_tokens >= 1.
using GemmFn = void (*)(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a,
                        uint64_t a_stride, int64_t n_tokens, float* y, int64_t y_stride);

// A layout this table multiplies weights of some format fastest in (an internal DType of the same
// block size and bytes, dtype.h), and the in-place converter to it.
struct Relayout {
  DType to = DType::F32;
  RelayoutFn fn = nullptr;
};

// SwiGLU's activation, x[i] = silu(x[i]) * y[i]; x and y must not overlap.
using SiluMulFn = void (*)(float* x, const float* y, int64_t n);
// GELU (tanh form) in place: x[i] = gelu(x[i]).
using GeluFn = void (*)(float* x, int64_t n);
// One online-softmax step over a tile of scores (see ox::attn_softmax_ref): returns the tile's sum.
using AttnSoftmaxFn = float (*)(float* s, int64_t n, float scale, float* max);
// Attention's weighted sum of values: acc[d] += sum_j w[j] * v[j * v_stride + d], d < dv, j < n.
using AttnAccumulateFn = void (*)(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n,
                                  int64_t dv);
// The same sum over value rows still in a cache type: v row j at v + j * v_row_bytes, dv values.
using AttnAccumulateRowsFn = void (*)(float* acc, const float* w, const uint8_t* v, uint64_t v_row_bytes, int64_t n,
                                      int64_t dv);

struct KernelTable {
  const char* isa = "scalar";  // "scalar", "avx2", "avx512", "simd128", "neon", "neon-dotprod"
  // vec_dot[W]: one row of weight format W against one row of activations already
  // converted to quant_traits(W).vec_dot_type. Index = DType id; null if unsupported.
  VecDotFn vec_dot[kDTypeCount] = {};
  // quantize_row[A]: converts f32 activations to activation format A (Q8_0, Q8_1, Q8_K, F16...).
  // ISA versions must produce bytes identical to the scalar reference.
  FromFloatFn quantize_row[kDTypeCount] = {};
  // gemm[W]: tiled product for weight format W (activations in its vec_dot_type). Null where an
  // ISA has no tile kernel: matmul then calls vec_dot once per (row, token). The scalar table
  // leaves every slot null, since its vec_dot already is the reference.
  GemmFn gemm[kDTypeCount] = {};
  // gemm_few[W]: a product of any number of tokens in which every output has the bits that the
  // one-token path (gemm[W] with one token, vec_dot[W] where gemm is null) gives that token alone;
  // each weight row is unpacked once for a group of tokens. matmul takes it for a step of single
  // tokens of several sequences (OpContext::one_token_bits), so a sequence decodes to the same
  // tokens whatever shares its step. Null: matmul runs the one-token path per token instead.
  GemmFn gemm_few[kDTypeCount] = {};
  // gemm_wide[W]: a product of many tokens free to sum each cell in another order than vec_dot[W]
  // (within float rounding of it), for passes with no one-token path to agree with bit for bit: an
  // encoder's embedding pass (OpContext::order_free). Null: matmul takes gemm[W] there too.
  GemmFn gemm_wide[kDTypeCount] = {};
  // gemm_all_tokens[W]: gemm[W] splits a product's tokens into cache-sized passes itself, so matmul
  // hands it every token at once and its weights are unpacked once per product rather than once
  // per chunk of tokens. False: matmul passes kActChunkBytes of activation rows at a time.
  bool gemm_all_tokens[kDTypeCount] = {};
  // to_float[W]: rows of format W to f32 (what attention reads of an F16, BF16 or quantized KV
  // cache, one tile of positions at a time). Exact conversions, so every ISA gives the reference's bits.
  ToFloatFn to_float[kDTypeCount] = {};
  // relayout[W]: set where weights of format W are better converted, once at load, to another layout
  // (LoadedModel does so where the file's bytes are its own to change). fn null: W stays as it is.
  Relayout relayout[kDTypeCount] = {};
  // ISA versions must give the bits of the scalar reference, ox::silu_mul_ref
  // (core/base/activation.h), so a model's output does not depend on the CPU it runs on.
  SiluMulFn silu_mul = nullptr;
  GeluFn gelu = nullptr;  // the bits of ox::gelu_ref (core/base/activation.h), as silu_mul
  // References: ox::attn_softmax_ref (same bits of every weight; the sum within float rounding) and
  // ox::attn_accumulate_ref (within float rounding), core/base/attention_ref.h.
  AttnSoftmaxFn attn_softmax = nullptr;
  AttnAccumulateFn attn_accumulate = nullptr;
  // attn_accumulate_rows[V]: attn_accumulate over rows of cache type V read in place, with the bits
  // of to_float[V] into f32 rows followed by attn_accumulate, so a query row gets the same result
  // whether attention converts a tile for several rows or reads the cache once for one (decode
  // without grouped heads). Null: attention converts the tile.
  AttnAccumulateRowsFn attn_accumulate_rows[kDTypeCount] = {};
};

namespace scalar {
// Every slot filled from core/quant's scalar references.
const KernelTable& table();
}  // namespace scalar

// Every table this CPU can run, scalar first, best last (for tests and benchmarks).
const std::vector<const KernelTable*>& all_kernels();

// The best table for this CPU, unless OXIDIZE_ISA names another one (set_isa_override wins over both).
const KernelTable& best_kernels();

// Finds a runnable table by name ("scalar", "avx2", ...); error naming the choices if absent.
Result<const KernelTable*> kernels_by_name(std::string_view isa);

// Forces best_kernels() to a named table (the CLI's --isa flag). Call before any compute.
Status set_isa_override(std::string_view isa);

// Implemented once per platform (kernels/x86/select.cpp, kernels/simd128/select.cpp,
// kernels/neon/select.cpp, kernels/scalar_only.cpp): the runnable tables, scalar first.
std::vector<const KernelTable*> platform_tables();

}  // namespace ox::kernels
