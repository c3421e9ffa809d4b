// quant_traits(): the scalar-reference view of the format registry (formats.cpp), and
// quantize_rows(), the one way weights are quantized.
#include "core/quant/traits.h"

#include <vector>

#include "core/quant/formats.h"

namespace ox {

void quantize_rows(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* importance) {
  const QuantTraits& t = quant_traits(type);
  if (t.quantize_rows != nullptr) {
    t.quantize_rows(x, y, n_rows, n_per_row, importance);
    return;
  }
  const uint64_t row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(n_per_row));
  for (int64_t r = 0; r < n_rows; ++r) {
    t.from_float_ref(x + r * n_per_row, static_cast<uint8_t*>(y) + static_cast<uint64_t>(r) * row_bytes, n_per_row);
  }
}

void quantize_rows_uniform(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row) {
  std::vector<float> ones;
  if (quant_traits(type).needs_importance) ones.assign(static_cast<size_t>(n_per_row), 1.0f);
  quantize_rows(type, x, y, n_rows, n_per_row, ones.empty() ? nullptr : ones.data());
}

const QuantTraits& quant_traits(DType type) { return format(type).traits; }

}  // namespace ox
