// x86-64: detects AVX2 / AVX-512 once (cpuid + xgetbv; this file is compiled with baseline
// flags) and builds the runnable tables, scalar first, best last. Each table is a copy of the
// scalar one patched by every ISA level it includes.
#include <cpuid.h>

#include "kernels/kernels.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx512/avx512.h"

namespace ox::kernels {
namespace {

struct CpuFeatures {
  bool avx2 = false;    // AVX2 + FMA + F16C + BMI2, YMM state enabled by the OS
  bool avx512 = false;  // + AVX-512 F/BW/VL/DQ/VNNI, ZMM and opmask state enabled
};

uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));  // asm: no -mxsave needed here
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(uint32_t reg, int n) { return ((reg >> n) & 1u) != 0; }

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  uint32_t a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return f;
  const bool fma = bit(c, 12), osxsave = bit(c, 27), avx = bit(c, 28), f16c = bit(c, 29);
  if (!osxsave || !avx || __get_cpuid_max(0, nullptr) < 7) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;    // XMM + YMM state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = bit(b, 5), bmi2 = bit(b, 8);
  const bool avx512f = bit(b, 16), avx512dq = bit(b, 17), avx512bw = bit(b, 30), avx512vl = bit(b, 31);
  const bool vnni = bit(c, 11);
  f.avx2 = os_ymm && avx2 && fma && f16c && bmi2;
  f.avx512 = f.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl && vnni;
  return f;
}

// patch() functions are compiled with their ISA's flags (the compiler may use those
// instructions even to copy a table), so each is called only once its features are known present.
const KernelTable& avx2_table() {
  static const KernelTable table = [] {
    KernelTable t = scalar::table();
    avx2::patch(t);
    return t;
  }();
  return table;
}

const KernelTable& avx512_table() {
  static const KernelTable table = [] {
    KernelTable t = avx2_table();
    avx512::patch(t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<const KernelTable*> platform_tables() {
  const CpuFeatures cpu = detect_cpu_features();
  std::vector<const KernelTable*> tables = {&scalar::table()};
  if (cpu.avx2) tables.push_back(&avx2_table());
  if (cpu.avx512) tables.push_back(&avx512_table());
  return tables;
}

}  // namespace ox::kernels
