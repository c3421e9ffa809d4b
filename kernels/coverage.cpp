#include "kernels/coverage.h"

#include "kernels/kernels.h"

namespace ox::kernels {

std::string coverage_cell(const SlotCoverage& c) {
  if (c.vec_dot && c.gemm) return "dot+gemm";
  if (c.vec_dot) return "dot";
  if (c.gemm) return "gemm";
  return "scalar";
}

std::vector<SlotCoverage> format_coverage(DType type) {
  const uint32_t i = static_cast<uint32_t>(type);
  const KernelTable& ref = scalar::table();
  std::vector<SlotCoverage> out;
  for (const KernelTable* t : all_kernels()) {
    if (t == &ref) continue;
    SlotCoverage c;
    c.vec_dot = t->vec_dot[i] != nullptr && t->vec_dot[i] != ref.vec_dot[i];
    c.gemm = t->gemm[i] != nullptr;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> simd_table_names() {
  std::vector<std::string> out;
  for (const KernelTable* t : all_kernels()) {
    if (t != &scalar::table()) out.emplace_back(t->isa);
  }
  return out;
}

}  // namespace ox::kernels
