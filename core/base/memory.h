// How much memory this process may still take, asked before large allocations (KV cache, model
// buffers) so that a request too large is refused with the numbers instead of ending in an abort
// (wasm: a failed allocation aborts; natively: std::bad_alloc without exceptions, or swapping).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/status.h"

namespace ox {

struct MemoryBudget {
  uint64_t total = 0;      // physical memory (natively, capped by RLIMIT_AS) or the wasm heap's maximum
  uint64_t available = 0;  // what an allocation can still get: MemAvailable / the address-space limit
                           // left, or the wasm heap's free bytes plus the growth left
};

MemoryBudget memory_budget();

// ok if `bytes` fit in memory_budget().available; else kTooLarge naming `what`, the bytes needed and
// the bytes available, and `hint` (what the user can change).
Status check_memory(uint64_t bytes, std::string_view what, std::string_view hint);

}  // namespace ox
