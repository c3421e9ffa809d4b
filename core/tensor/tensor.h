// Tensor: a typed, read-only view of a weight matrix or vector, usually inside the mapped GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "core/quant/dtype.h"

namespace ox {

// Row-major view: `rows` rows of `cols` elements each (cols = GGUF dims[0], the contiguous one).
// 3-D weights (experts) are `n_mats` matrices of rows x cols stored back to back.
struct Tensor {
  const char* name = "";
  DType type = DType::F32;
  int64_t cols = 0;
  int64_t rows = 1;
  int64_t n_mats = 1;
  uint64_t row_bytes = 0;
  const uint8_t* data = nullptr;
  int64_t mat = 0;  // which matrix of its 3-D tensor a matrix(e) view is (0 otherwise)

  bool empty() const { return data == nullptr; }
  const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * row_bytes; }
  // Matrix e of a 3-D tensor, as a 2-D view.
  Tensor matrix(int64_t e) const {
    Tensor t = *this;
    t.n_mats = 1;
    t.mat = e;
    t.data = data + static_cast<uint64_t>(e) * static_cast<uint64_t>(rows) * row_bytes;
    return t;
  }
};

}  // namespace ox
