// Memory read bandwidth of this machine: a streaming sum over a 256 MB buffer (far past the
// caches), on 1 and 2 threads, each thread reading its own half. The ceiling VecDotCold
// (kernels_bench.cpp) and decode are measured against.
// Run: oxidize_microbench --benchmark_filter=MemBandwidth
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr uint64_t kBufferBytes = uint64_t{256} << 20;

const std::vector<uint64_t>& buffer() {
  static const std::vector<uint64_t> buf = [] {
    std::vector<uint64_t> b(kBufferBytes / sizeof(uint64_t));
    for (size_t i = 0; i < b.size(); ++i) b[i] = i * 0x9E3779B97F4A7C15ULL;  // touch every page
    return b;
  }();
  return buf;
}

// Eight independent sums over 64-byte lines: the loads, not the adds, are the limit.
uint64_t stream_sum(const uint64_t* p, uint64_t words) {
  uint64_t s[8] = {};
  for (uint64_t i = 0; i + 8 <= words; i += 8) {
    for (int k = 0; k < 8; ++k) s[k] += p[i + k];
  }
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

void MemBandwidth(benchmark::State& state) {
  const std::vector<uint64_t>& buf = buffer();
  const uint64_t words = buf.size() / static_cast<uint64_t>(state.threads());
  const uint64_t* part = buf.data() + words * static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) benchmark::DoNotOptimize(stream_sum(part, words));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * words * sizeof(uint64_t)));
}
BENCHMARK(MemBandwidth)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace
