// Decode throughput of n_seq sequences batched: one Model::forward_batch of one token per sequence
// per iteration (what continuous batching runs), against n_seq = 1. The matmuls read the weights
// once per pass whatever the batch, so tokens/s in total should grow with n_seq while decode is
// bound by weight reads. Model: $OXIDIZE_BENCH_MODEL, else a synthetic tiny-15M Q4_0 written once to
// a temporary file. Run: oxidize_microbench --benchmark_filter=BatchedDecode
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"

namespace {

constexpr int kPrompt = 32;  // tokens in each sequence before timing starts
constexpr int kCtx = 256;    // each sequence goes back to kPrompt when it reaches this

struct Loaded {
  std::shared_ptr<const ox::Model> model;
  std::string error;
};

const Loaded& bench_model() {
  static const Loaded loaded = []() -> Loaded {
    std::string path;
    if (const char* env = std::getenv("OXIDIZE_BENCH_MODEL"); env != nullptr && *env != '\0') {
      path = env;
    } else {
      path = "/tmp/oxidize-batch-decode-bench-tiny-15M-q4_0.gguf";
      if (FILE* f = std::fopen(path.c_str(), "rb")) {
        std::fclose(f);
      } else {
        ox::SynthOptions o;
        o.out_path = path;
        o.shape = "tiny-15M";
        o.type = "Q4_0";
        o.n_threads = 0;
        if (ox::Status s = ox::synth_gguf(o); !s.is_ok()) return {nullptr, s.message()};
      }
    }
    auto file = ox::gguf::GgufFile::open(path);
    if (!file.ok()) return {nullptr, file.status().message()};
    auto model = ox::Model::load(std::shared_ptr<const ox::gguf::GgufFile>(std::move(file).value()));
    if (!model.ok()) return {nullptr, model.status().message()};
    return {model.value(), ""};
  }();
  return loaded;
}

// Args: n_seq, threads.
void BM_BatchedDecode(benchmark::State& state) {
  const int n_seq = static_cast<int>(state.range(0));
  const std::shared_ptr<const ox::Model>& model = bench_model().model;
  if (model == nullptr) {
    state.SkipWithError(bench_model().error.c_str());
    return;
  }
  ox::ThreadPool pool(static_cast<int>(state.range(1)));
  auto made = model->new_state(kCtx, std::max(kPrompt, n_seq), &ox::kernels::best_kernels(), &pool,
                               ox::DType::F16, ox::DType::F16, n_seq);
  if (!made.ok()) {
    state.SkipWithError(made.status().message().c_str());
    return;
  }
  ox::ForwardState& st = *made.value();
  const int n_vocab = model->hparams().n_vocab;
  std::vector<float> logits(static_cast<size_t>(n_seq) * n_vocab);
  std::vector<ox::BatchToken> batch;
  for (int s = 0; s < n_seq; ++s) {
    batch.clear();
    for (int i = 0; i < kPrompt; ++i) batch.push_back({1 + (i * 37 + s * 101) % (n_vocab - 1), s, i, i == kPrompt - 1});
    if (!model->forward_batch(st, batch, logits.data()).is_ok()) state.SkipWithError("prompt refused");
  }
  int32_t token = 7;
  for (auto _ : state) {
    batch.clear();
    for (int s = 0; s < n_seq; ++s) {
      if (st.kv.n_pos(s) == kCtx && !model->seq_rm(st, s, kPrompt, -1).is_ok()) state.SkipWithError("seq_rm");
      batch.push_back({token, s, st.kv.n_pos(s), true});
      token = 1 + (token * 31) % (n_vocab - 1);
    }
    if (!model->forward_batch(st, batch, logits.data()).is_ok()) state.SkipWithError("batch refused");
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * n_seq,
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BatchedDecode)->ArgsProduct({{1, 2, 4, 8}, {1, 2}})->ArgNames({"n_seq", "threads"})->UseRealTime();

}  // namespace
