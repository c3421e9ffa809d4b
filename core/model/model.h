// Model: hyperparameters plus views of the weights inside a GgufFile, and the forward pass of its
// architecture. Each architecture is a file (llama.cpp, ...) registered in arch.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/kv_cache/kv_cache.h"
#include "core/model/hparams.h"
#include "core/ops/ops.h"
#include "core/tensor/tensor.h"

namespace ox {

// Tensors of one transformer block. A tensor an architecture does not use stays empty.
struct LayerWeights {
  Tensor attn_norm, attn_norm_b;
  Tensor wq, wk, wv, wo;
  Tensor bq, bk, bv, bo;
  Tensor ffn_norm, ffn_norm_b;
  Tensor ffn_gate, ffn_up, ffn_down;
};

struct ModelWeights {
  Tensor token_embd;
  Tensor output_norm, output_norm_b;
  Tensor output;  // may alias token_embd (tied embeddings)
  Tensor rope_freqs;
  std::vector<LayerWeights> layers;
};

// Working memory of a forward pass, sized once for the largest batch (no allocation per token).
struct ForwardState {
  OpContext ops;
  KvCache kv;
  int max_batch = 0;
  // Shapes with n = tokens in the batch:
  std::vector<float> x;       // [n, n_embd] residual stream
  std::vector<float> h;       // [n, n_embd] normalised input of a sub-block
  std::vector<float> q;       // [n, n_head * head_dim_k]
  std::vector<float> k;       // [n, n_head_kv * head_dim_k]
  std::vector<float> v;       // [n, n_head_kv * head_dim_v]
  std::vector<float> att;     // [n, n_head * head_dim_v]
  std::vector<float> proj;    // [n, n_embd]
  std::vector<float> gate;    // [n, n_ff]
  std::vector<float> up;      // [n, n_ff]
};

class Model {
 public:
  // Validates architecture, hyperparameters and every tensor's name, type and shape.
  static Result<std::shared_ptr<const Model>> load(std::shared_ptr<const gguf::GgufFile> file);

  const HParams& hparams() const { return hparams_; }
  const gguf::GgufFile& file() const { return *file_; }
  const ModelWeights& weights() const { return weights_; }

  // Sizes a ForwardState for n_ctx positions and batches of up to max_batch tokens.
  Result<std::unique_ptr<ForwardState>> new_state(int n_ctx, int max_batch, const kernels::KernelTable* kernels,
                                                  ThreadPool* pool) const;

  // Runs tokens at positions pos0.. through the model, filling the KV cache. logits receives
  // [n_vocab] floats for the last token (or [tokens.size()][n_vocab] when all_logits).
  // Precondition (checked by the session): pos0 + tokens.size() <= n_ctx, ids < n_vocab.
  void forward(ForwardState& st, std::span<const int32_t> tokens, int64_t pos0, bool all_logits,
               float* logits) const;

 private:
  friend struct ModelBuilder;
  using ForwardFn = void (*)(const Model&, ForwardState&, std::span<const int32_t>, int64_t, bool, float*);
  std::shared_ptr<const gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  ForwardFn forward_ = nullptr;
  std::deque<std::vector<float>> converted_;  // f32 copies of small non-f32 tensors (norms)
};

}  // namespace ox
