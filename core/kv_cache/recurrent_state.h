// RecurrentState: the per-sequence state of recurrent layers (Mamba's convolution window and SSM
// state, ...), the part of the cache that recurrent and hybrid models keep instead of (or besides)
// K/V rows. Per layer, per sequence: conv_dim floats then ssm_dim floats, f32 as in llama.cpp's
// recurrent memory. Unlike K/V rows it is not indexed by position: it summarises all positions a
// sequence holds, so it can be kept or cleared whole, never cut in the middle.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/big_buffer.h"
#include "core/base/status.h"

namespace ox {

struct RecurrentShape {
  int n_layer = 0;
  int n_seq = 1;
  int64_t conv_dim = 0;  // floats of the convolution window per (layer, sequence)
  int64_t ssm_dim = 0;   // floats of the recurrent (SSM / WKV) state per (layer, sequence)
  bool empty() const { return conv_dim == 0 && ssm_dim == 0; }
  uint64_t bytes() const {
    return static_cast<uint64_t>(n_layer) * static_cast<uint64_t>(n_seq) *
           static_cast<uint64_t>(conv_dim + ssm_dim) * sizeof(float);
  }
};

class RecurrentState {
 public:
  static Result<RecurrentState> create(const RecurrentShape& shape);
  RecurrentState() = default;

  const RecurrentShape& shape() const { return shape_; }
  bool empty() const { return shape_.empty(); }
  uint64_t bytes() const { return data_.size(); }

  float* conv(int layer, int seq) { return base(layer, seq); }
  float* ssm(int layer, int seq) { return base(layer, seq) + shape_.conv_dim; }
  const float* conv(int layer, int seq) const { return const_cast<RecurrentState*>(this)->conv(layer, seq); }
  const float* ssm(int layer, int seq) const { return const_cast<RecurrentState*>(this)->ssm(layer, seq); }

  // Zeroes every layer's state of seq: the state of a sequence that holds no position.
  void clear(int seq);
  // Every layer's state of src copied to dst (llama_memory_seq_cp of a whole recurrent sequence).
  void copy(int src, int dst);
  // The bytes of seq, one span per layer (saved state).
  std::vector<std::span<const uint8_t>> ranges(int seq) const;
  std::vector<std::span<uint8_t>> mutable_ranges(int seq);

 private:
  float* base(int layer, int seq) {
    const uint64_t index = static_cast<uint64_t>(layer) * static_cast<uint64_t>(shape_.n_seq) + static_cast<uint64_t>(seq);
    return reinterpret_cast<float*>(data_.data()) + index * static_cast<uint64_t>(shape_.conv_dim + shape_.ssm_dim);
  }
  uint64_t layer_bytes() const { return static_cast<uint64_t>(shape_.conv_dim + shape_.ssm_dim) * sizeof(float); }
  RecurrentShape shape_;
  BigBuffer data_;  // zeroed pages: every sequence starts empty
};

}  // namespace ox
