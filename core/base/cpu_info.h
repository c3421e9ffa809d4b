// How many CPUs this process may use, and how many threads to run by default. The thread pool
// sizes its workers from the first; the CLI and the browser pick a default -t from the second.
#pragma once

namespace ox {

// Logical CPUs this process may run on: the sched_getaffinity mask on Linux (so `taskset -c 0,1`
// and container cpusets count), std::thread::hardware_concurrency elsewhere (in the browser that
// is navigator.hardwareConcurrency). Always >= 1. A CPU quota (cgroup cpu.max) is not seen.
int available_cpu_count();

// Physical cores among those CPUs: SMT siblings count once. Linux: distinct
// (physical_package_id, core_id) pairs of the affinity mask's CPUs under /sys; where the topology
// cannot be read, available_cpu_count(). Always >= 1 and <= available_cpu_count().
int physical_core_count();

// The default thread count (-t): physical_core_count(), as llama.cpp (a second hyperthread on a
// core adds no bandwidth or SIMD units to decode, only contention). Under Emscripten only
// navigator.hardwareConcurrency is known (logical CPUs, and the page's main thread competes for
// them): all of them up to 4, half of them above that (SMT is then likely), at most 8.
int default_thread_count();

}  // namespace ox
