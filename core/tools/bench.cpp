// run_bench: times forward passes only, on a fresh context per repetition.
#include "core/tools/bench.h"

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/tools/quantize.h"
#include "kernels/kernels.h"

namespace ox {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The weight type holding the most bytes.
std::string dominant_type(const gguf::GgufFile& f) {
  std::map<std::string, uint64_t> bytes;
  for (const gguf::TensorInfo& t : f.tensors()) {
    bytes[dtype_name(t.type)] += t.n_bytes;
  }
  std::string best;
  uint64_t most = 0;
  for (const auto& [name, b] : bytes) {
    if (b > most) most = b, best = name;
  }
  return best;
}

// The model's type as llama-bench reports it: the preset named by general.file_type (a Q4_0 file
// keeps its output matrix in Q8_0 or Q6_K, so the largest tensor type can mislead); without that
// key, the weight type holding the most bytes.
std::string model_type(const gguf::GgufFile& f, uint64_t* n_params) {
  uint64_t total = 0;
  for (const gguf::TensorInfo& t : f.tensors()) total += t.n_elements;
  *n_params = total;
  Result<uint32_t> ftype = f.get_u32("general.file_type");
  if (ftype.ok()) {
    for (const QuantPreset& p : quant_presets()) {
      if (p.llama_ftype == ftype.value()) return p.name;
    }
  }
  return dominant_type(f);
}

// Deterministic, in-vocabulary token ids that are not BOS/EOS.
std::vector<int32_t> bench_tokens(int n, int n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  uint32_t x = 12345;
  for (int32_t& id : ids) {
    x = x * 1664525u + 1013904223u;
    id = 3 + static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(n_vocab > 3 ? n_vocab - 3 : 1));
  }
  return ids;
}

// One timed test: pp (one eval of n_prompt tokens) or tg (n_gen evals of one token).
Result<double> time_once(Session& session, int n_prompt, int n_gen, int n_vocab) {
  OX_TRY(session.truncate(0));
  const double start = seconds_now();
  if (n_prompt > 0) {
    OX_TRY(session.eval(bench_tokens(n_prompt, n_vocab)));
  } else {
    const std::vector<int32_t> ids = bench_tokens(n_gen, n_vocab);
    for (int i = 0; i < n_gen; ++i) OX_TRY(session.eval(std::span<const int32_t>(&ids[i], 1)));
  }
  const double elapsed = seconds_now() - start;
  return (n_prompt > 0 ? n_prompt : n_gen) / elapsed;
}

}  // namespace

Result<std::vector<BenchResult>> run_bench(std::shared_ptr<const LoadedModel> model, const BenchOptions& options) {
  std::vector<BenchResult> results;
  BenchResult base;
  const std::string& path = model->file().name();
  base.model = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  base.type = model_type(model->file(), &base.n_params);
  base.model_bytes = model->file().bytes().size();
  base.isa = kernels::best_kernels().isa;
  const int n_vocab = model->hparams().n_vocab;

  std::vector<std::pair<int, int>> tests;
  for (int n : options.n_prompt) if (n > 0) tests.emplace_back(n, 0);
  for (int n : options.n_gen) if (n > 0) tests.emplace_back(0, n);
  for (int n_threads : options.n_threads) {
    for (const auto& [n_prompt, n_gen] : tests) {
      SessionOptions so;
      so.n_threads = n_threads;
      so.n_batch = std::max(options.n_batch, 1);
      so.cache_type_k = options.cache_type_k;
      so.cache_type_v = options.cache_type_v;
      so.n_ctx = std::max(n_prompt, n_gen) + 1;
      OX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, so));
      BenchResult r = base;
      r.n_threads = n_threads;
      r.n_prompt = n_prompt;
      r.n_gen = n_gen;
      r.test = n_prompt > 0 ? strfmt("pp%d", n_prompt) : strfmt("tg%d", n_gen);
      if (options.warmup) OX_TRY(time_once(*session, n_prompt, n_gen, n_vocab).status());
      double sum = 0;
      for (int rep = 0; rep < options.repetitions; ++rep) {
        OX_ASSIGN_OR_RETURN(double ts, time_once(*session, n_prompt, n_gen, n_vocab));
        r.samples_ts.push_back(ts);
        sum += ts;
      }
      const double n = static_cast<double>(r.samples_ts.size());
      r.mean_ts = n > 0 ? sum / n : 0;
      double var = 0;
      for (double ts : r.samples_ts) var += (ts - r.mean_ts) * (ts - r.mean_ts);
      r.stddev_ts = n > 1 ? std::sqrt(var / (n - 1)) : 0;
      results.push_back(std::move(r));
    }
  }
  return results;
}

std::string bench_markdown(const std::vector<BenchResult>& results) {
  std::string out = "| model | size | params | type | isa | threads | test | t/s |\n"
                    "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |\n";
  for (const BenchResult& r : results) {
    out += strfmt("| %s | %.2f MiB | %.2f M | %s | %s | %d | %s | %.2f ± %.2f |\n", r.model.c_str(),
                  r.model_bytes / 1048576.0, r.n_params / 1e6, r.type.c_str(), r.isa.c_str(), r.n_threads,
                  r.test.c_str(), r.mean_ts, r.stddev_ts);
  }
  return out;
}

std::string bench_json(const std::vector<BenchResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchResult& r : results) {
    out.push_back({{"model", r.model}, {"model_bytes", r.model_bytes}, {"n_params", r.n_params}, {"type", r.type},
                   {"isa", r.isa}, {"n_threads", r.n_threads}, {"test", r.test}, {"n_prompt", r.n_prompt},
                   {"n_gen", r.n_gen}, {"avg_ts", r.mean_ts}, {"stddev_ts", r.stddev_ts}, {"samples_ts", r.samples_ts}});
  }
  return out.dump(2);
}

}  // namespace ox
