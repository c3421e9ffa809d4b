// vec_dot throughput of every weight format on every kernel table this CPU runs, in GB/s of
// weight bytes read (what bounds decode). Two shapes, 4096-wide rows:
//   Cold: ~64 MB of weights, far past the caches: compare with MemBandwidth (membw_bench.cpp).
//   Hot:  ~256 KB of weights, L2-resident: the kernel's own speed, what multi-threaded decode
//         (less bandwidth per core) and prompt processing depend on.
// Run: oxidize_microbench --benchmark_filter=VecDot
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

namespace {

using ox::bench::gaussian;

using ox::DType;
using ox::kernels::KernelTable;

constexpr int64_t kCols = 4096;
constexpr DType kFormats[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0,   DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::IQ4_NL, DType::Q2_K,
                              DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,   DType::IQ4_XS,
                              DType::MXFP4, DType::TQ1_0, DType::TQ2_0};

uint32_t id(DType t) { return static_cast<uint32_t>(t); }

// `rows` rows of realistic weights: 64 distinct rows quantized by the reference quantizer,
// repeated (the bytes' content does not change the memory traffic).
std::vector<uint8_t> make_weights(DType w, int64_t rows) {
  const uint64_t row_bytes = ox::dtype_row_bytes(w, kCols);
  constexpr int64_t kDistinct = 64;
  std::vector<uint8_t> distinct(row_bytes * kDistinct);
  const std::vector<float> x = gaussian(kCols * kDistinct, 1);
  ox::quant_traits(w).from_float_ref(x.data(), distinct.data(), kCols * kDistinct);
  std::vector<uint8_t> out(row_bytes * static_cast<uint64_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out.data() + r * row_bytes, distinct.data() + (r % kDistinct) * row_bytes, row_bytes);
  }
  return out;
}

void vec_dot_rows(benchmark::State& state, const KernelTable* table, DType w, uint64_t target_bytes) {
  const DType a = ox::quant_traits(w).vec_dot_type;
  const uint64_t row_bytes = ox::dtype_row_bytes(w, kCols);
  const int64_t rows = static_cast<int64_t>((target_bytes + row_bytes - 1) / row_bytes);
  const std::vector<uint8_t> weights = make_weights(w, rows);
  std::vector<uint8_t> act(ox::dtype_row_bytes(a, kCols));
  const std::vector<float> x = gaussian(kCols, 2);
  table->quantize_row[id(a)](x.data(), act.data(), kCols);
  std::vector<float> out(static_cast<size_t>(rows));
  const ox::VecDotFn dot = table->vec_dot[id(w)];
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r)
      dot(kCols, &out[static_cast<size_t>(r)], weights.data() + r * row_bytes, act.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * rows * static_cast<int64_t>(row_bytes));
  state.counters["rows"] = static_cast<double>(rows);
}

const bool kRegistered = [] {
  for (const KernelTable* table : ox::kernels::all_kernels()) {
    for (DType w : kFormats) {
      const std::string name = std::string(table->isa) + "/" + ox::dtype_name(w);
      benchmark::RegisterBenchmark(("VecDotCold/" + name).c_str(), vec_dot_rows, table, w, uint64_t{64} << 20)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.3);
      benchmark::RegisterBenchmark(("VecDotHot/" + name).c_str(), vec_dot_rows, table, w, uint64_t{256} << 10)
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.2);
    }
  }
  return true;
}();

}  // namespace
