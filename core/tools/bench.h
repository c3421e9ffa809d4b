// Throughput benchmark in llama-bench's spirit: prompt processing (pp) and token generation (tg)
// on fixed token ids, so tokenization and sampling are excluded, optionally on top of a context
// already holding n_depth tokens. Shared by `oxidize bench` (native and node-wasm) and the browser
// package.
#pragma once

#include <string>
#include <vector>

#include "core/session/session.h"

namespace ox {

struct BenchOptions {
  std::vector<int> n_prompt = {512};  // pp tests (0 entries skipped)
  std::vector<int> n_gen = {128};     // tg tests
  std::vector<int> n_threads = {1};
  std::vector<int> n_depth = {0};     // tokens in the cache before each test (llama-bench -d)
  int repetitions = 5;
  int n_batch = 512;
  DType cache_type_k = DType::F16;  // -ctk / -ctv
  DType cache_type_v = DType::F16;
  bool swa_full = false;  // --swa-full: sliding-window layers keep the whole context
  bool warmup = true;  // one untimed run of each test first (V8 tiers up wasm during the first run)
};

struct BenchResult {
  std::string model;      // file name
  std::string type;       // dominant weight type, e.g. Q4_0
  uint64_t model_bytes = 0;
  // Weight bytes one decoded token reads: dense tensors plus n_expert_used experts per MoE layer
  // (core/model/moe.h's decode_weight_bytes).
  uint64_t weight_bytes_per_token = 0;
  uint64_t n_params = 0;
  std::string isa;        // kernel table used
  int n_threads = 1;
  std::string test;       // "pp512", "tg128", "pp512 @ d4096" (llama-bench's names)
  int n_prompt = 0;
  int n_gen = 0;
  int n_depth = 0;
  std::string type_k;     // KV cache types, "f16", "q8_0", ...
  std::string type_v;
  uint64_t kv_bytes = 0;  // the session's KV cache, sized n_depth + n_prompt + n_gen positions
  std::vector<double> samples_ts;  // tokens per second of each repetition
  double mean_ts = 0;
  double stddev_ts = 0;
};

Result<std::vector<BenchResult>> run_bench(std::shared_ptr<const LoadedModel> model, const BenchOptions& options);

// The table llama-bench prints (markdown), a JSON array of the results, and the same objects one
// per line (llama-bench's jsonl).
std::string bench_markdown(const std::vector<BenchResult>& results);
std::string bench_json(const std::vector<BenchResult>& results);
std::string bench_jsonl(const std::vector<BenchResult>& results);

}  // namespace ox
