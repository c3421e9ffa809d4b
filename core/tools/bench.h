// Throughput benchmark in llama-bench's spirit: prompt processing (pp) and token generation (tg)
// on fixed token ids, so tokenization and sampling are excluded. Shared by `oxidize bench`
// (native and node-wasm) and the browser package.
#pragma once

#include <string>
#include <vector>

#include "core/session/session.h"

namespace ox {

struct BenchOptions {
  std::vector<int> n_prompt = {512};  // pp tests (0 entries skipped)
  std::vector<int> n_gen = {128};     // tg tests
  std::vector<int> n_threads = {1};
  int repetitions = 5;
  int n_batch = 512;
  DType cache_type_k = DType::F16;  // -ctk / -ctv
  DType cache_type_v = DType::F16;
  bool warmup = true;  // one untimed run of each test first (V8 tiers up wasm during the first run)
};

struct BenchResult {
  std::string model;      // file name
  std::string type;       // dominant weight type, e.g. Q4_0
  uint64_t model_bytes = 0;
  uint64_t n_params = 0;
  std::string isa;        // kernel table used
  int n_threads = 1;
  std::string test;       // "pp512", "tg128"
  int n_prompt = 0;
  int n_gen = 0;
  std::vector<double> samples_ts;  // tokens per second of each repetition
  double mean_ts = 0;
  double stddev_ts = 0;
};

Result<std::vector<BenchResult>> run_bench(std::shared_ptr<const LoadedModel> model, const BenchOptions& options);

// The table llama-bench prints (markdown) and a JSON array of the results.
std::string bench_markdown(const std::vector<BenchResult>& results);
std::string bench_json(const std::vector<BenchResult>& results);

}  // namespace ox
