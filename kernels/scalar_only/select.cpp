// Runnable kernel tables on this platform (scalar_only), scalar first, best last.
#include "kernels/kernels.h"

namespace ox::kernels {

std::vector<const KernelTable*> platform_tables() { return {&scalar::table()}; }

}  // namespace ox::kernels
