// attention() decoding one token on the best kernel table: gemma3 1B's attention (4 heads over one
// KV head of 256, f16 cache), a sliding-window layer (window 512, the cache holding only its rows
// from the window's tile on, as KvCache keeps them) and a global layer, at depths 1024, 4096 and
// 16384, on 1 and 2 threads. A window layer's time should not grow with depth, and on 2 threads
// should be about half its 1-thread time (the window cut in chunks for both threads).
// Run: oxidize_microbench --benchmark_filter=AttentionDecode
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "core/base/thread_pool.h"
#include "core/ops/attention.h"
#include "core/ops/ops.h"
#include "kernels/kernels.h"

namespace {

constexpr int kHeads = 4, kHeadDim = 256, kWindow = 512;

// state.range(0): depth (the token decoded is at that position), range(1): threads, range(2): window.
void attention_decode(benchmark::State& state) {
  const int64_t pos = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const int window = static_cast<int>(state.range(2));
  const ox::kernels::KernelTable& table = ox::kernels::best_kernels();
  ox::ThreadPool pool(threads);
  ox::OpContext ctx;
  ctx.kernels = &table;
  ctx.pool = &pool;
  ox::AttentionParams p;
  p.n_head = kHeads;
  p.n_head_kv = 1;
  p.head_dim_k = p.head_dim_v = kHeadDim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  p.window = window;
  // A window layer's cache holds from the tile of the window's first position on.
  const int64_t first = window > 0 ? std::max<int64_t>(0, pos + 1 - window) / ox::kAttentionTile * ox::kAttentionTile : 0;
  const int64_t rows = pos + 1 - first;
  const uint64_t row_bytes = ox::dtype_row_bytes(ox::DType::F16, kHeadDim);
  const std::vector<uint8_t> k = ox::bench::quantize(ox::DType::F16, ox::bench::gaussian(rows * kHeadDim, 1));
  const std::vector<uint8_t> v = ox::bench::quantize(ox::DType::F16, ox::bench::gaussian(rows * kHeadDim, 2));
  const std::vector<float> q = ox::bench::gaussian(kHeads * kHeadDim, 3);
  std::vector<float> out(kHeads * kHeadDim);
  const ox::KvLayerView view{k.data(), v.data(), row_bytes, row_bytes, ox::DType::F16, ox::DType::F16, first};
  for (auto _ : state) {
    ox::attention(ctx, q.data(), 1, pos, view, p, out.data());
    benchmark::DoNotOptimize(out.data());
  }
}

const bool kRegistered = [] {
  for (int window : {kWindow, 0}) {
    for (int64_t depth : {1024, 4096, 16384}) {
      for (int threads : {1, 2}) {
        const std::string name = std::string("AttentionDecode/") + (window > 0 ? "window512" : "global") + "/d" +
                                 std::to_string(depth) + "/t" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), attention_decode)
            ->Args({depth, threads, window})
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime()
            ->MinTime(0.2);
      }
    }
  }
  return true;
}();

}  // namespace
