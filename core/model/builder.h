// ModelBuilder: looks up and validates tensors while an architecture's loader fills ModelWeights.
// Every problem is an error naming the file and the tensor; nothing is trusted from the GGUF.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace ox {

struct ModelBuilder {
  Model& model;

  const gguf::GgufFile& file() const { return *model.file_; }
  const HParams& hp() const { return model.hparams_; }
  ModelWeights& weights() { return model.weights_; }
  ArchSpec& spec() { return model.spec_; }

  // A matrix of `rows` rows of `cols` elements (GGUF dims {cols, rows}) in a format we can multiply.
  Result<Tensor> matrix(const std::string& name, int64_t cols, int64_t rows);
  // A vector of n elements as F32 (converted once at load if stored otherwise).
  Result<Tensor> vector(const std::string& name, int64_t n);
  // Same, but an absent tensor yields an empty Tensor instead of an error.
  Result<Tensor> optional_matrix(const std::string& name, int64_t cols, int64_t rows);
  Result<Tensor> optional_vector(const std::string& name, int64_t n);
  // A small matrix the forward pass reads as floats (convolution kernels, A, D): converted to F32
  // once at load if stored otherwise.
  Result<Tensor> f32_matrix(const std::string& name, int64_t cols, int64_t rows);
  // count vectors of n elements (GGUF dims {n, count}: per-head norm weights) as one F32 vector of
  // n * count; absent: an empty Tensor.
  Result<Tensor> optional_vectors(const std::string& name, int64_t n, int64_t count);
  // n_mats matrices of rows x cols stored back to back (GGUF dims {cols, rows, n_mats}: experts).
  Result<Tensor> matrices(const std::string& name, int64_t cols, int64_t rows, int64_t n_mats);
  bool has(const std::string& name) const { return file().find_tensor(name) != nullptr; }
  // Checks a tensor's presence (where required), shape {cols, rows, n_mats} and type as matrix()
  // would, without keeping or converting it: a block the forward pass never runs.
  Status check(const std::string& name, int64_t cols, int64_t rows, int64_t n_mats, bool required);

  void set_forward(Model::ForwardFn fn) { model.forward_ = fn; }
  void set_layers(std::vector<LayerAttention> layers) { model.layers_ = std::move(layers); }
};

// Rows [first, first + count) of a 2-D tensor (or elements of a vector) as a tensor of their own:
// how fused tensors (attn_qkv, phi3's ffn_up) become separate q/k/v and gate/up views.
Tensor row_slice(const Tensor& t, int64_t first, int64_t count);
Tensor element_slice(const Tensor& vector_f32, int64_t first, int64_t count);

// Block-tensor name: layer_name(3, "attn_q") == "blk.3.attn_q.weight".
std::string layer_name(int layer, const char* base, const char* suffix = "weight");

}  // namespace ox
