// KernelTable::silu_mul on every table this CPU runs: SwiGLU's activation over one prompt chunk
// of a 0.5B-class model's feed-forward (n_ff = 5632, 128 tokens), in values per second.
// Run: oxidize_microbench --benchmark_filter=SiluMul
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace {

using ox::kernels::KernelTable;

constexpr int64_t kValues = 5632 * 128;

void silu_mul(benchmark::State& state, const KernelTable* table) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 4.0f);  // gate values: mostly inside the exp's clamps
  std::vector<float> gate(kValues), up(kValues), x(kValues);
  for (float& v : gate) v = dist(rng);
  for (float& v : up) v = dist(rng);
  for (auto _ : state) {
    // silu_mul works in place: restore the input untimed, so every pass sees the same values
    // (repeated passes would drift towards 0 or overflow, and denormals are slow).
    state.PauseTiming();
    std::memcpy(x.data(), gate.data(), sizeof(float) * kValues);
    state.ResumeTiming();
    table->silu_mul(x.data(), up.data(), kValues);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kValues);
}

const bool kRegistered = [] {
  for (const KernelTable* table : ox::kernels::all_kernels()) {
    benchmark::RegisterBenchmark(("SiluMul/" + std::string(table->isa)).c_str(), silu_mul, table)
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.3);
  }
  return true;
}();

}  // namespace
