// Ops: the numeric building blocks of a forward pass. They know tensors and kernels, not models.
// Every op that touches weights goes through the KernelTable and splits work over the ThreadPool.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/tensor/tensor.h"
#include "kernels/kernels.h"

namespace ox {

// Sees the f32 activations entering matmuls (importance matrices: core/tools/imatrix.h). Called on
// the calling thread before the product, once per weight tensor and call: the row views of one
// fused tensor (attn_qkv's q, k and v) count as that tensor once. w.mat tells an expert's matrix.
class MatmulObserver {
 public:
  // x: [n_tokens, w.cols], the input of y = x w^T.
  virtual void observe(const Tensor& w, const float* x, int64_t n_tokens) = 0;

 protected:
  ~MatmulObserver() = default;
};

// What an op needs besides its operands: the kernels, the threads and reusable scratch memory
// (grown on demand, never shrunk, so steady-state decode allocates nothing).
struct OpContext {
  const kernels::KernelTable* kernels = nullptr;
  ThreadPool* pool = nullptr;
  std::vector<uint8_t> act_scratch;  // activations quantized for matmul
  std::vector<float> float_scratch;  // per-thread temporaries (attention scores, ...)
  MatmulObserver* observer = nullptr;  // null (the default): matmuls pay one test of it
  // Set for a step whose tokens each belong to a different sequence (a decode step of several
  // slots): every product gives each token the bits it gets alone (KernelTable::gemm_few), where
  // the tile kernels of a larger batch sum in another order. Model::forward_batch sets it.
  bool one_token_bits = false;
  // Set for a pass whose products may sum in any order (KernelTable::gemm_wide): an encoder's
  // embedding pass, which no one-token decode has to agree with. Model::forward_hidden sets it.
  bool order_free = false;
};

// Runs fn on the pool, or inline on the calling thread when `work` (multiply-adds or similar) is too
// small to repay waking the workers: decode of a small model runs hundreds of tiny ops per token.
void parallel_for_work(OpContext& ctx, int64_t work, FunctionRef<void(int, int)> fn);
// fn(begin, end) over contiguous shares of [0, n_rows), one per thread; inline when
// n_rows * work_per_row is small (the same rule as parallel_for_work). For row-wise element ops
// (norms, RoPE, SwiGLU) of a prompt, which would otherwise run on one thread between matmuls.
void parallel_rows(OpContext& ctx, int64_t n_rows, int64_t work_per_row, FunctionRef<void(int64_t, int64_t)> fn);

// y[t, r] = sum_k w[r, k] * x[t, k] for t < n_tokens, r < w.rows.
// x: [n_tokens, w.cols] f32, y: [n_tokens, w.rows] f32 (row stride y_stride, default w.rows).
void matmul(OpContext& ctx, const Tensor& w, const float* x, int64_t n_tokens, float* y, int64_t y_stride = 0);

// Several products of the same input (q, k, v; gate, up): x is quantized once and all rows are
// split over the threads in one parallel region (one wake-up instead of one per matrix, which is
// what a small model's decode is made of). Every w must satisfy same_activations() with the first.
struct MatmulOutput {
  const Tensor* w;
  float* y;          // [n_tokens, y_stride]
  int64_t y_stride;  // usually w->rows
};
void matmul_many(OpContext& ctx, std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens);
// True if matmul_many may take a and b together (same row length and activation format).
bool same_activations(const Tensor& a, const Tensor& b);

// Row `index` of an embedding table, dequantized: out[w.cols].
void get_row(const Tensor& w, int64_t index, float* out);

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]   (n_rows rows of n)
void rms_norm(const float* x, const float* weight, int64_t n, int64_t n_rows, float eps, float* out);
// out[i] = (x[i] - mean) / sqrt(var + eps) * weight[i] + bias[i]; weight and bias may be null.
void layer_norm(const float* x, const float* weight, const float* bias, int64_t n, int64_t n_rows, float eps,
                float* out);

enum class RopeStyle { kNorm, kNeox };  // adjacent pairs (x0,x1) / halves (x_i, x_{i+d/2})
struct RopeParams {
  RopeStyle style = RopeStyle::kNorm;
  int n_rot = 0;          // rotated dims per head (<= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  const float* freq_factors = nullptr;  // [n_rot/2] divisors (llama3 rope_freqs), or null
  // YaRN, as ggml's rope_yarn: with ext_factor != 0, pair i's angle blends the interpolated
  // (freq_scale) and the original (extrapolated) angle by a ramp over the pairs between the
  // correction dims of beta_fast and beta_slow rotations in n_ctx_orig positions, and the
  // magnitude gains 1 + 0.1 ln(1 / freq_scale). cos and sin are always multiplied by attn_factor.
  // Defaults: off (the plain rotation).
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int n_ctx_orig = 0;
};
// The magnitude rope() gives cos and sin (attn_factor, times YaRN's 1 + 0.1 ln(1/freq_scale)).
float rope_mscale(const RopeParams& p);
// Rotates n_heads heads of head_dim for each of n_tokens rows (row stride = n_heads*head_dim),
// token t at position pos0 + t.
void rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int64_t pos0, const RopeParams& p);

// x[i] = silu(x[i]) * y[i]; x and y must not overlap. Through k.silu_mul, whose versions all give
// the bits of the scalar reference (exp_bounded.h's exp), so every target computes the same bits.
void silu_mul(const kernels::KernelTable& k, float* x, const float* y, int64_t n);
// x[i] = gelu(x[i]) * y[i] (tanh approximation)
void gelu_mul(float* x, const float* y, int64_t n);
void gelu(float* x, int64_t n);
// The same bits through the table's kernel (KernelTable::gelu).
void gelu(const kernels::KernelTable& k, float* x, int64_t n);
// x[i] = max(x[i], 0)^2 (ggml's relu then sqr)
void relu_sqr(float* x, int64_t n);
// xIELU (Apertus), with ggml_xielu's parameters (the learned ones through softplus): x > 0:
// alpha_p x^2 + beta x; else alpha_n (expm1(min(x, eps)) - x) + beta x.
struct XieluParams {
  float alpha_n = 0.0f;  // beta + softplus(learned alpha_n)
  float alpha_p = 0.0f;  // softplus(learned alpha_p)
  float beta = 0.0f;
  float eps = 0.0f;
};
// The op's parameters from the learned values (xielu.alpha_n, alpha_p, beta, eps of a GGUF).
XieluParams xielu_params(float alpha_n, float alpha_p, float beta, float eps);
void xielu(float* x, int64_t n, const XieluParams& p);
// The same through an f16 table, as ggml's CPU backend computes GELU: gelu(f16(x)) rounded to f16
// (exact for |x| >= 10). For parity with llama.cpp.
void gelu_mul_f16(float* x, const float* y, int64_t n);
void gelu_f16(float* x, int64_t n);
// x[i] = f16(x[i]): what a value stored in an F16 KV cache reads back as.
void round_to_f16(float* x, int64_t n);
// x[i] += y[i]
void add(float* x, const float* y, int64_t n);
// x[r, i] += bias[i] for n_rows rows
void add_bias(float* x, const float* bias, int64_t n, int64_t n_rows);
void scale(float* x, float s, int64_t n);
// In-place softmax of n values.
void softmax(float* x, int64_t n);

// Dequantizes a whole small tensor (norm weights, biases) to f32.
std::vector<float> to_f32(const Tensor& t);

}  // namespace ox
