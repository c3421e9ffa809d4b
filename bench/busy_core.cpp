// oxidize_busy_core BUSY_MS IDLE_MS: spins for BUSY_MS, sleeps for IDLE_MS, forever (until killed).
// Stands in for what shares a core with the engine in real use (a browser's main thread, another
// tenant of a VM), so that a change to how ops split work over threads can be measured with a core
// that is only partly available, e.g.:
//   taskset -c 1 build/native/bin/oxidize_busy_core 5 5 &
//   build/native/bin/oxidize bench -m MODEL -p 128 -n 32 -t 2; kill %1
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: oxidize_busy_core BUSY_MS IDLE_MS\n");
    return 2;
  }
  const double busy_ms = std::atof(argv[1]), idle_ms = std::atof(argv[2]);
  if (!(busy_ms > 0) || !(idle_ms >= 0)) {
    std::fprintf(stderr, "oxidize_busy_core: BUSY_MS must be > 0 and IDLE_MS >= 0 (got '%s' '%s')\n", argv[1], argv[2]);
    return 2;
  }
  using clock = std::chrono::steady_clock;
  const auto busy = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(busy_ms));
  const auto idle = std::chrono::duration<double, std::milli>(idle_ms);
  volatile uint64_t spins = 0;
  for (;;) {
    const auto until = clock::now() + busy;
    while (clock::now() < until) spins = spins + 1;
    if (idle_ms > 0) std::this_thread::sleep_for(idle);
  }
}
