// llama-imatrix --show-statistics: per-tensor statistics of the mean squared activations an
// importance matrix holds, and their element-weighted averages per layer. The arithmetic is
// llama.cpp's (tools/imatrix/imatrix.cpp), in float and in its order, so the printed figures agree.
#pragma once

#include <string>
#include <vector>

#include "core/tools/imatrix_file.h"

namespace ox {

struct ImatrixTensorStats {
  std::string name;    // "blk.0.attn_q.weight"
  std::string layer;   // "0" ("-" outside the blocks)
  std::string tensor;  // "attn_q" (the part before ".weight"; the whole name without one)
  float total = 0, mean = 0, max = 0, min = 0, stddev = 0;  // of the per-column mean squares
  float active = 0;    // the fraction above 1e-5
  int elements = 0;    // columns with data (matrices no token reached are left out)
  float entropy = 0;   // of the columns' shares of the total, in bits
  float zd = 0;        // the fraction with a z-score above 1
  float cossim = 0;    // cosine similarity of the raw sums with the previous layer's same tensor
};

struct ImatrixLayerStats {
  int layer = 0;
  float total = 0, zd = 0, cossim = 0;  // element-weighted means over the layer's tensors
};

// The rows of the per-tensor table, in llama.cpp's order (by short name, then by total, largest
// first). Entries with no counted token are left out, as llama.cpp does.
std::vector<ImatrixTensorStats> imatrix_statistics(const Imatrix& imatrix);
// The per-layer table (blocks only, in layer order).
std::vector<ImatrixLayerStats> imatrix_layer_statistics(const std::vector<ImatrixTensorStats>& tensors);

}  // namespace ox
