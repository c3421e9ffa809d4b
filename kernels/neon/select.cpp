// Runnable kernel tables on AArch64: scalar, NEON (baseline armv8-a) and, when the CPU reports
// the dot-product extension (getauxval(AT_HWCAP) & HWCAP_ASIMDDP), NEON with SDOT.
#include "kernels/kernels.h"
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/neon.h"

#if defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ox::kernels {
namespace {

bool cpu_has_dotprod() {
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#elif defined(__APPLE__)
  return true;  // every Apple AArch64 core has it
#else
  return false;
#endif
}

const KernelTable& neon_table() {
  static const KernelTable table = [] {
    KernelTable t = scalar::table();
    neon::patch(t);
    return t;
  }();
  return table;
}

// Built only once SDOT is known present (the patch code is compiled with +dotprod).
const KernelTable& dotprod_table() {
  static const KernelTable table = [] {
    KernelTable t = neon_table();
    neon_dotprod::patch(t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<const KernelTable*> platform_tables() {
  std::vector<const KernelTable*> tables = {&scalar::table(), &neon_table()};
  if (cpu_has_dotprod()) tables.push_back(&dotprod_table());
  return tables;
}

}  // namespace ox::kernels
