// Runnable kernel tables on this platform (wasm): scalar and SIMD128, chosen at compile time
// (every engine that runs this build's wasm has SIMD128: it fails to validate otherwise).
#include "kernels/kernels.h"
#include "kernels/simd128/simd128.h"

namespace ox::kernels {

std::vector<const KernelTable*> platform_tables() {
  static const KernelTable simd = [] {
    KernelTable t = scalar::table();
    simd128::patch(t);
    return t;
  }();
  return {&scalar::table(), &simd};
}

}  // namespace ox::kernels
