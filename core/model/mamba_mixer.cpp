// The Mamba and Mamba-2 mixers of one layer over a batch (llama.cpp's build_mamba_layer /
// build_mamba2_layer): projections over the whole batch, the convolution and the scan per run of
// one sequence, carrying that sequence's state in the cache.
#include <cstring>

#include "core/model/recurrent.h"
#include "core/ops/ssm.h"

namespace ox {
namespace {

const float* f32(const Tensor& t) { return reinterpret_cast<const float*>(t.data); }

// Copies `cols` columns starting at `first` of n rows of `stride` floats into a dense [n, cols].
void gather_cols(const float* src, int64_t stride, int64_t first, int64_t cols, int64_t n, float* dst) {
  for (int64_t t = 0; t < n; ++t) {
    std::memcpy(dst + t * cols, src + t * stride + first, sizeof(float) * static_cast<size_t>(cols));
  }
}

// out[t] = silu(z[t]) * y[t] for n rows (z rows of z_stride floats, y dense of `cols`), into y.
void gate_silu(const kernels::KernelTable& k, const float* z, int64_t z_stride, float* y, int64_t cols, int64_t n,
               float* tmp) {
  for (int64_t t = 0; t < n; ++t) {
    std::memcpy(tmp, z + t * z_stride, sizeof(float) * static_cast<size_t>(cols));
    silu_mul(k, tmp, y + t * cols, cols);
    std::memcpy(y + t * cols, tmp, sizeof(float) * static_cast<size_t>(cols));
  }
}

}  // namespace

void mamba_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                 float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t d_inner = hp.ssm_d_inner, d_state = hp.ssm_d_state, dt_rank = hp.ssm_dt_rank;
  const int d_conv = hp.ssm_d_conv;
  const int64_t n_xdb = dt_rank + 2 * d_state;
  float* xz = st.mixer.data();     // [n, 2 d_inner]: x | z
  float* xc = xz + n * 2 * d_inner;  // [n, d_inner] x after the convolution
  float* xdb = xc + n * d_inner;     // [n, dt_rank + 2 d_state]: dt | B | C
  float* dt_in = xdb + n * n_xdb;    // [n, dt_rank]
  float* dt = dt_in + n * dt_rank;   // [n, d_inner]
  float* y = dt + n * d_inner;       // [n, d_inner]

  matmul(st.ops, L.ssm_in, h, n, xz);
  for (const SeqRun& r : runs) {
    ssm_conv(st.kv.rs().conv(l, r.seq), xz + r.t0 * 2 * d_inner, 2 * d_inner, f32(L.ssm_conv1d), d_inner, d_conv, r.n,
             xc + r.t0 * d_inner, d_inner);
  }
  add_bias(xc, f32(L.ssm_conv1d_b), d_inner, n);
  silu(xc, n * d_inner);

  matmul(st.ops, L.ssm_x, xc, n, xdb);
  gather_cols(xdb, n_xdb, 0, dt_rank, n, dt_in);
  matmul(st.ops, L.ssm_dt, dt_in, n, dt);
  add_bias(dt, f32(L.ssm_dt_b), d_inner, n);

  // Mamba-1: every channel is a head of one, with its own A row.
  SsmScanShape shape;
  shape.n_head = static_cast<int>(d_inner);
  shape.head_dim = 1;
  shape.d_state = static_cast<int>(d_state);
  shape.n_group = 1;
  shape.a_per_state = true;
  for (const SeqRun& r : runs) {
    const SsmScanInput in{xc + r.t0 * d_inner,         d_inner, dt + r.t0 * d_inner, d_inner, f32(L.ssm_a),
                          xdb + r.t0 * n_xdb + dt_rank, xdb + r.t0 * n_xdb + dt_rank + d_state, n_xdb};
    ssm_scan(st.kv.rs().ssm(l, r.seq), in, shape, r.n, y + r.t0 * d_inner, d_inner);
  }
  // y = (y + x * D) * silu(z)
  const float* d_skip = f32(L.ssm_d);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < d_inner; ++i) y[t * d_inner + i] += xc[t * d_inner + i] * d_skip[i];
  }
  gate_silu(*st.ops.kernels, xz + d_inner, 2 * d_inner, y, d_inner, n, dt /* free after the scan */);
  matmul(st.ops, L.ssm_out, y, n, out);
}

void mamba2_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                  float* out) {
  const HParams& hp = m.hparams();
  const LayerWeights& L = m.weights().layers[static_cast<size_t>(l)];
  const int64_t d_inner = hp.ssm_d_inner, d_state = hp.ssm_d_state, n_head = hp.ssm_dt_rank;
  const int64_t n_group = hp.ssm_n_group, head_dim = d_inner / n_head;
  const int d_conv = hp.ssm_d_conv;
  const int64_t conv_dim = d_inner + 2 * n_group * d_state;
  const int64_t n_in = d_inner + conv_dim + n_head;
  float* zxbcdt = st.mixer.data();  // [n, n_in]: z | x B C | dt
  float* xbc = zxbcdt + n * n_in;   // [n, conv_dim] x B C after the convolution
  float* y = xbc + n * conv_dim;    // [n, d_inner]

  matmul(st.ops, L.ssm_in, h, n, zxbcdt);
  for (const SeqRun& r : runs) {
    ssm_conv(st.kv.rs().conv(l, r.seq), zxbcdt + r.t0 * n_in + d_inner, n_in, f32(L.ssm_conv1d), conv_dim, d_conv,
             r.n, xbc + r.t0 * conv_dim, conv_dim);
  }
  if (!L.ssm_conv1d_b.empty()) add_bias(xbc, f32(L.ssm_conv1d_b), conv_dim, n);  // optional in falcon-h1
  silu(xbc, n * conv_dim);
  // dt += dt_bias, in place in its columns
  const float* dt_b = f32(L.ssm_dt_b);
  for (int64_t t = 0; t < n; ++t) {
    float* dt = zxbcdt + t * n_in + d_inner + conv_dim;
    for (int64_t i = 0; i < n_head; ++i) dt[i] += dt_b[i];
  }

  SsmScanShape shape;
  shape.n_head = static_cast<int>(n_head);
  shape.head_dim = static_cast<int>(head_dim);
  shape.d_state = static_cast<int>(d_state);
  shape.n_group = static_cast<int>(n_group);
  shape.a_per_state = false;
  for (const SeqRun& r : runs) {
    const float* x = xbc + r.t0 * conv_dim;
    const SsmScanInput in{x,        conv_dim, zxbcdt + r.t0 * n_in + d_inner + conv_dim, n_in, f32(L.ssm_a),
                          x + d_inner, x + d_inner + n_group * d_state, conv_dim};
    ssm_scan(st.kv.rs().ssm(l, r.seq), in, shape, r.n, y + r.t0 * d_inner, d_inner);
  }
  // y = (y + x * D[head]) * silu(z), then RMSNorm per group of d_inner / n_group channels.
  const float* d_skip = f32(L.ssm_d);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < d_inner; ++i) y[t * d_inner + i] += xbc[t * conv_dim + i] * d_skip[i / head_dim];
  }
  gate_silu(*st.ops.kernels, zxbcdt, n_in, y, d_inner, n, xbc /* the conv output is no longer needed */);
  const int64_t group = d_inner / n_group;
  // falcon-h1's files may lack the norm; llama.cpp then skips it, as here.
  for (int64_t t = 0; t < n && !L.ssm_norm.empty(); ++t) {
    for (int64_t g = 0; g < n_group; ++g) {
      float* yg = y + t * d_inner + g * group;
      rms_norm(yg, f32(L.ssm_norm) + g * group, group, 1, hp.rms_eps, yg);
    }
  }
  matmul(st.ops, L.ssm_out, y, n, out);
}

}  // namespace ox
