// Which weight formats each kernel table of this build accelerates: a table slot that still holds
// the scalar reference is a format that silently runs at scalar speed on that ISA. `oxidize
// formats` prints this; scripts/formats-table gathers it from the x86, wasm and aarch64 builds
// into README's table.
#pragma once

#include <string>
#include <vector>

#include "core/quant/dtype.h"

namespace ox::kernels {

// What a table does for one weight format.
struct SlotCoverage {
  bool vec_dot = false;  // its own vec_dot (not the scalar reference)
  bool gemm = false;     // a tile kernel
};

// One cell text: "dot+gemm", "dot", "gemm" or "scalar".
std::string coverage_cell(const SlotCoverage& c);

// The coverage of `type` in every runnable table other than the scalar one, in all_kernels() order.
std::vector<SlotCoverage> format_coverage(DType type);

// The names of those tables (the columns of format_coverage).
std::vector<std::string> simd_table_names();

}  // namespace ox::kernels
