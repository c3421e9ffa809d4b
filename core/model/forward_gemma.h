// The forward passes of gemma4 and gemma3n (forward_gemma4.cpp, forward_gemma3n.cpp) and the pieces
// they share: per-layer token inputs, attention over per-layer head shapes and reused K/V.
#pragma once

#include <span>

#include "core/model/model.h"

namespace ox {

void forward_gemma4(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
void forward_gemma3n(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);

// x / sqrt(mean(x^2) + eps) over n_rows rows of n: ggml_rms_norm without a weight.
void rms_normalise(float* x, int64_t n, int64_t n_rows, float eps);
// GELU (tanh form), through llama.cpp's f16 table under Numerics::kLlamaCpp.
void gelu_in_place(const ForwardState& st, float* x, int64_t n);

// The batch's per-layer inputs into st.per_layer (llama.cpp's build_inp_per_layer +
// project_per_layer_inputs): for token t and layer l, (rmsnorm(x W_model_proj / sqrt(n_embd))[l] *
// proj_norm + per_layer_token_embd[token][l] * sqrt(n_pl)) / sqrt(2). x: the scaled embeddings
// [n, n_embd]; out: [n, n_layer, n_pl].
void gemma_per_layer_inputs(const Model& m, ForwardState& st, std::span<const BatchToken> batch, const float* x, float* out);
// out = post_norm(proj(gelu(in W_inp_gate) * per-layer input of l)) for n rows of in [n, n_embd].
void gemma_per_layer_branch(const Model& m, ForwardState& st, int l, const float* in, int64_t n, float* out);
// out = attention of layer l over h [n, n_embd]: q (and, in layers that store K/V, k and v)
// projected and head-normalised (q, k by weight; v without), rotated, K/V stored in the layer's
// cache rows; the layer attends over its cache layer (its own or the one it reuses) with the
// spec's attn_scale (1: unscaled).
void gemma_attention(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                     float* out);

}  // namespace ox
