// memory_budget(): /proc/meminfo and RLIMIT_AS natively, the heap's limits under Emscripten.
#include "core/base/memory.h"

#include <cstdio>
#include <cstring>

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#else
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace ox {
namespace {

#ifndef __EMSCRIPTEN__
// A "Key:  N kB" line of a /proc file, in bytes; 0 if missing.
uint64_t proc_kb(const char* path, const char* key) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t value = 0;
  const size_t key_len = std::strlen(key);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long kb = 0;
    if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':' &&
        std::sscanf(line + key_len + 1, "%llu", &kb) == 1) {
      value = static_cast<uint64_t>(kb) * 1024;
      break;
    }
  }
  std::fclose(f);
  return value;
}
#endif

double gib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

MemoryBudget memory_budget() {
  MemoryBudget b;
#ifdef __EMSCRIPTEN__
  const uint64_t heap_max = emscripten_get_heap_max();
  const uint64_t heap_size = emscripten_get_heap_size();
  const struct mallinfo mi = mallinfo();
  b.total = heap_max;
  // mallinfo's fields are declared int (compat/malloc.h) but hold dlmalloc's size_t: above 2 GiB
  // free they read negative, which a direct cast would turn into 2^64 - x.
  const uint64_t free_bytes = static_cast<uint32_t>(mi.fordblks);
  b.available = (heap_max > heap_size ? heap_max - heap_size : 0) + free_bytes;
#else
  b.total = proc_kb("/proc/meminfo", "MemTotal");
  b.available = proc_kb("/proc/meminfo", "MemAvailable");
  if (b.total == 0) {  // no /proc: what sysconf knows
    const long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    b.total = pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
    b.available = avail > 0 && size > 0 ? static_cast<uint64_t>(avail) * static_cast<uint64_t>(size) : b.total;
  }
  // `ulimit -v`: the address space left under the limit bounds every allocation.
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const uint64_t limit = static_cast<uint64_t>(rl.rlim_cur);
    const uint64_t used = proc_kb("/proc/self/status", "VmSize");
    const uint64_t left = limit > used ? limit - used : 0;
    if (b.total == 0 || limit < b.total) b.total = limit;
    if (b.available == 0 || left < b.available) b.available = left;
  }
  if (b.total == 0) b.total = b.available = UINT64_MAX;  // nothing known: do not refuse
#endif
  return b;
}

Status check_memory(uint64_t bytes, std::string_view what, std::string_view hint) {
  const MemoryBudget b = memory_budget();
  if (bytes <= b.available) return Status::ok();
  return error(ErrorCode::kTooLarge,
               strfmt("%.*s needs %.2f GiB but only %.2f GiB of memory is available (of %.2f GiB)%s%.*s",
                      static_cast<int>(what.size()), what.data(), gib(bytes), gib(b.available), gib(b.total),
                      hint.empty() ? "" : "; ", static_cast<int>(hint.size()), hint.data()));
}

}  // namespace ox
