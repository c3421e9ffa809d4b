// Tile kernels (KernelTable::gemm) against the vec_dot-per-(row, token) fallback, walked the way
// core/ops/matmul.cpp walks a thread's share: 16-row granules, all tokens of the chunk per call.
//   Prefill: 256 rows x 4096 columns (L2-resident weights) x 64 tokens; counter GMAC/s.
//   Decode:  one token over 4096 rows (hot, ~2 MB or less) ; bytes/s of weights.
// Run: oxidize_microbench --benchmark_filter=Gemm
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

namespace {

using ox::bench::gaussian;
using ox::bench::quantize;

using ox::DType;
using ox::kernels::KernelTable;

constexpr int64_t kCols = 4096;
constexpr int64_t kGranule = 16;
constexpr DType kFormats[] = {DType::F32,  DType::F16,  DType::Q4_0, DType::Q4_1, DType::Q5_0,   DType::Q8_0,
                              DType::IQ4_NL, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                              DType::IQ4_XS, DType::MXFP4, DType::TQ1_0, DType::TQ2_0};

uint32_t id(DType t) { return static_cast<uint32_t>(t); }

// use_gemm false: the fallback matmul takes when a table has no tile kernel.
void tile_product(benchmark::State& state, const KernelTable* table, DType w, int64_t rows, int64_t tokens,
                  bool use_gemm) {
  const DType a = ox::quant_traits(w).vec_dot_type;
  const ox::kernels::GemmFn gemm = table->gemm[id(w)];
  if (use_gemm && gemm == nullptr) {
    state.SkipWithError("no gemm in this table");
    return;
  }
  const uint64_t w_row = ox::dtype_row_bytes(w, kCols), a_row = ox::dtype_row_bytes(a, kCols);
  const std::vector<uint8_t> weights = quantize(w, gaussian(rows * kCols, 1));
  const std::vector<uint8_t> act = quantize(a, gaussian(tokens * kCols, 2));
  std::vector<float> y(static_cast<size_t>(rows * tokens));
  const ox::VecDotFn dot = table->vec_dot[id(w)];
  for (auto _ : state) {
    for (int64_t r0 = 0; r0 < rows; r0 += kGranule) {
      const int64_t nr = std::min(kGranule, rows - r0);
      if (use_gemm) {
        gemm(kCols, weights.data() + r0 * w_row, w_row, nr, act.data(), a_row, tokens, y.data() + r0, rows);
      } else {
        for (int64_t r = r0; r < r0 + nr; ++r)
          for (int64_t t = 0; t < tokens; ++t) dot(kCols, &y[t * rows + r], weights.data() + r * w_row, act.data() + t * a_row);
      }
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double macs = static_cast<double>(rows) * kCols * static_cast<double>(tokens);
  state.counters["GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * rows * static_cast<int64_t>(w_row));
}

const bool kRegistered = [] {
  for (const KernelTable* table : ox::kernels::all_kernels()) {
    if (std::string(table->isa) == "scalar") continue;
    for (DType w : kFormats) {
      const std::string name = std::string(table->isa) + "/" + ox::dtype_name(w);
      for (bool use_gemm : {true, false}) {
        const std::string how = use_gemm ? "/gemm" : "/vec_dot";
        benchmark::RegisterBenchmark(("GemmPrefill/" + name + how).c_str(), tile_product, table, w, int64_t{256},
                                     int64_t{64}, use_gemm)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
        benchmark::RegisterBenchmark(("GemmDecode/" + name + how).c_str(), tile_product, table, w, int64_t{512},
                                     int64_t{1}, use_gemm)
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.2);
      }
    }
  }
  return true;
}();

}  // namespace
