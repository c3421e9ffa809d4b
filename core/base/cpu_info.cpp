// CPU counts from the affinity mask and /sys topology (Linux), hardware_concurrency elsewhere.
#include "core/base/cpu_info.h"

#include <algorithm>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sched.h>
#define OX_HAVE_AFFINITY 1
#endif

namespace ox {
namespace {

int hardware_cpus() {
  const unsigned n = std::thread::hardware_concurrency();  // 0 when unknown
  return n == 0 ? 1 : static_cast<int>(n);
}

#if OX_HAVE_AFFINITY
// The CPUs of this process's affinity mask, ascending; empty if it cannot be read. The mask is
// sized at run time: a fixed cpu_set_t holds 1024 CPUs and sched_getaffinity fails (EINVAL) on
// machines configured for more.
std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  for (int n = 1024; n <= (1 << 16); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) return cpus;
    const size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      for (int c = 0; c < n; ++c) {
        if (CPU_ISSET_S(c, size, set)) cpus.push_back(c);
      }
      CPU_FREE(set);
      return cpus;
    }
    CPU_FREE(set);
  }
  return cpus;
}

// One integer from a sysfs file; false if it is missing or malformed.
bool read_sys_long(int cpu, const char* leaf, long* out) {
  char path[128];
  std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, leaf);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  const bool ok = std::fscanf(f, "%ld", out) == 1;
  std::fclose(f);
  return ok;
}
#endif

}  // namespace

int available_cpu_count() {
#if OX_HAVE_AFFINITY
  const std::vector<int> cpus = affinity_cpus();
  if (!cpus.empty()) return static_cast<int>(cpus.size());
#endif
  return hardware_cpus();
}

int physical_core_count() {
#if OX_HAVE_AFFINITY
  const std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return hardware_cpus();
  std::vector<std::pair<long, long>> cores;  // (physical_package_id, core_id) per CPU
  cores.reserve(cpus.size());
  for (int cpu : cpus) {
    long package = 0, core = 0;
    // Without topology (some VMs, restricted /sys) SMT cannot be told apart: count every CPU.
    if (!read_sys_long(cpu, "physical_package_id", &package) || !read_sys_long(cpu, "core_id", &core)) {
      return static_cast<int>(cpus.size());
    }
    cores.emplace_back(package, core);
  }
  std::sort(cores.begin(), cores.end());
  const auto unique_end = std::unique(cores.begin(), cores.end());
  return std::max(1, static_cast<int>(unique_end - cores.begin()));
#else
  return hardware_cpus();
#endif
}

int default_thread_count() {
#if defined(__EMSCRIPTEN__)
  const int logical = hardware_cpus();
  if (logical <= 4) return logical;
  return std::clamp(logical / 2, 4, 8);
#else
  return physical_core_count();
#endif
}

}  // namespace ox
