// Memory read bandwidth of this machine: a streaming sum over a 256 MB buffer (far past the
// caches), on 1 and 2 threads, each thread reading its own part. The ceiling VecDotCold
// (kernels_bench.cpp) and decode are measured against.
// Run: oxidize_microbench --benchmark_filter=MemBandwidth
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Independent sums over 64-byte lines: the loads, not the adds, must be the limit (16-byte SSE2
// loads on x86-64, where 8-byte scalar loads measured ~15% short of the vector stream).
uint64_t stream_sum(const uint64_t* p, uint64_t words) {
#if defined(__SSE2__)
  __m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
  for (uint64_t i = 0; i + 8 <= words; i += 8) {
    a = _mm_add_epi64(a, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    b = _mm_add_epi64(b, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2)));
    c = _mm_add_epi64(c, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 4)));
    d = _mm_add_epi64(d, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 6)));
  }
  uint64_t lanes[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), _mm_add_epi64(_mm_add_epi64(a, b), _mm_add_epi64(c, d)));
  return lanes[0] + lanes[1];
#else
  uint64_t s[8] = {};
  for (uint64_t i = 0; i + 8 <= words; i += 8) {
    for (int k = 0; k < 8; ++k) s[k] += p[i + k];
  }
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
#endif
}

void MemBandwidth(benchmark::State& state) {
  const std::vector<uint64_t>& buf = buffer();
  const uint64_t words = buf.size() / static_cast<uint64_t>(state.threads());
  const uint64_t* part = buf.data() + words * static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) benchmark::DoNotOptimize(stream_sum(part, words));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * words * sizeof(uint64_t)));
}
BENCHMARK(MemBandwidth)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// The same stream timed by CPU time, as VecDot* are: on a machine shared with other work, wall
// time counts their time slices too, CPU time only ours (while still paying for shared DRAM).
void MemBandwidthCpuTime(benchmark::State& state) { MemBandwidth(state); }
BENCHMARK(MemBandwidthCpuTime)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace
