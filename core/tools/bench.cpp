// run_bench: times forward passes only; each repetition starts from the same context depth.
#include "core/tools/bench.h"

#include <chrono>
#include <cstdint>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/kv_cache/kv_cache.h"
#include "core/model/moe.h"
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

// One timed test on top of the first n_depth positions (filled by run_test, kept from run to run):
// pp is one eval of n_prompt tokens, tg n_gen evals of one token. Sliding-window layers that moved
// past the depth's window get it back from depth_state, as llama-bench restores its saved state.
Result<double> time_once(Session& session, int n_depth, int n_prompt, int n_gen, int n_vocab,
                         const std::vector<uint8_t>& depth_state) {
  OX_TRY(session.truncate(n_depth));
  if (!session.can_resume(n_depth)) OX_TRY(session.load_state(depth_state));
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

// llama-bench's test name: "pp512", "tg128", with " @ d4096" when the context starts at a depth.
std::string test_name(int n_prompt, int n_gen, int n_depth) {
  std::string name = n_prompt > 0 ? strfmt("pp%d", n_prompt) : strfmt("tg%d", n_gen);
  if (n_depth > 0) name += strfmt(" @ d%d", n_depth);
  return name;
}

// One row: a session of n_depth + n_prompt + n_gen positions (llama-bench's n_ctx), the depth
// filled once, untimed; the warm-up and every repetition then run on top of it.
Result<BenchResult> run_test(std::shared_ptr<const LoadedModel> model, const BenchOptions& options, BenchResult r) {
  SessionOptions so;
  so.n_threads = r.n_threads;
  so.n_batch = std::max(options.n_batch, 1);
  so.cache_type_k = options.cache_type_k;
  so.cache_type_v = options.cache_type_v;
  so.swa_full = options.swa_full;
  const int64_t n_ctx = static_cast<int64_t>(r.n_depth) + r.n_prompt + r.n_gen;
  if (n_ctx > INT32_MAX) {
    return error(ErrorCode::kInvalidArgument, strfmt("bench: depth %d + %d tokens do not fit one context", r.n_depth,
                                                     r.n_prompt + r.n_gen));
  }
  so.n_ctx = static_cast<int>(n_ctx);
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, so));
  const int n_vocab = model->hparams().n_vocab;
  r.test = test_name(r.n_prompt, r.n_gen, r.n_depth);
  r.type_k = kv_cache_type_name(options.cache_type_k);
  r.type_v = kv_cache_type_name(options.cache_type_v);
  r.kv_bytes = session->kv_bytes();
  std::vector<uint8_t> depth_state;
  if (r.n_depth > 0) {
    OX_TRY(session->eval(bench_tokens(r.n_depth, n_vocab)));
    if (session->window_only_cache()) {
      OX_ASSIGN_OR_RETURN(depth_state, session->save_state());
    }
  }
  if (options.warmup) OX_TRY(time_once(*session, r.n_depth, r.n_prompt, r.n_gen, n_vocab, depth_state).status());
  double sum = 0;
  for (int rep = 0; rep < options.repetitions; ++rep) {
    OX_ASSIGN_OR_RETURN(double ts, time_once(*session, r.n_depth, r.n_prompt, r.n_gen, n_vocab, depth_state));
    r.samples_ts.push_back(ts);
    sum += ts;
  }
  const double n = static_cast<double>(r.samples_ts.size());
  r.mean_ts = n > 0 ? sum / n : 0;
  double var = 0;
  for (double ts : r.samples_ts) var += (ts - r.mean_ts) * (ts - r.mean_ts);
  r.stddev_ts = n > 1 ? std::sqrt(var / (n - 1)) : 0;
  return r;
}

nlohmann::json row_json(const BenchResult& r) {
  return {{"model", r.model},       {"model_bytes", r.model_bytes}, {"n_params", r.n_params},
          {"weight_bytes_per_token", r.weight_bytes_per_token},
          {"type", r.type},         {"isa", r.isa},                 {"n_threads", r.n_threads},
          {"test", r.test},         {"n_prompt", r.n_prompt},       {"n_gen", r.n_gen},
          {"n_depth", r.n_depth},   {"type_k", r.type_k},           {"type_v", r.type_v},
          {"kv_bytes", r.kv_bytes}, {"avg_ts", r.mean_ts},          {"stddev_ts", r.stddev_ts},
          {"samples_ts", r.samples_ts}};
}

}  // namespace

// The order llama-bench runs them in: per thread count, per depth, every pp test then every tg test.
Result<std::vector<BenchResult>> run_bench(std::shared_ptr<const LoadedModel> model, const BenchOptions& options) {
  for (int d : options.n_depth) {
    if (d < 0) return error(ErrorCode::kInvalidArgument, strfmt("bench: depth %d is negative", d));
  }
  BenchResult base;
  const std::string& path = model->file().name();
  base.model = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  base.type = model_type(model->file(), &base.n_params);
  base.model_bytes = model->file().file_bytes();
  base.weight_bytes_per_token = decode_weight_bytes(model->model());
  base.isa = kernels::best_kernels().isa;

  std::vector<std::pair<int, int>> tests;
  for (int n : options.n_prompt) if (n > 0) tests.emplace_back(n, 0);
  for (int n : options.n_gen) if (n > 0) tests.emplace_back(0, n);
  std::vector<BenchResult> results;
  for (int n_threads : options.n_threads) {
    for (int n_depth : options.n_depth) {
      for (const auto& [n_prompt, n_gen] : tests) {
        BenchResult r = base;
        r.n_threads = n_threads;
        r.n_depth = n_depth;
        r.n_prompt = n_prompt;
        r.n_gen = n_gen;
        OX_ASSIGN_OR_RETURN(BenchResult done, run_test(model, options, std::move(r)));
        results.push_back(std::move(done));
      }
    }
  }
  return results;
}

// type_k / type_v columns only when a row leaves f16, as llama-bench shows non-default parameters.
std::string bench_markdown(const std::vector<BenchResult>& results) {
  bool types = false;
  for (const BenchResult& r : results) types = types || r.type_k != "f16" || r.type_v != "f16";
  std::string out = types ? "| model | size | params | type | isa | threads | type_k | type_v | test | t/s |\n"
                            "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n"
                          : "| model | size | params | type | isa | threads | test | t/s |\n"
                            "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |\n";
  for (const BenchResult& r : results) {
    out += strfmt("| %s | %.2f MiB | %.2f M | %s | %s | %d |", r.model.c_str(), r.model_bytes / 1048576.0,
                  r.n_params / 1e6, r.type.c_str(), r.isa.c_str(), r.n_threads);
    if (types) out += strfmt(" %s | %s |", r.type_k.c_str(), r.type_v.c_str());
    out += strfmt(" %s | %.2f ± %.2f |\n", r.test.c_str(), r.mean_ts, r.stddev_ts);
  }
  return out;
}

std::string bench_json(const std::vector<BenchResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchResult& r : results) out.push_back(row_json(r));
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);  // a file name may not be UTF-8
}

std::string bench_jsonl(const std::vector<BenchResult>& results) {
  std::string out;
  for (const BenchResult& r : results) {
    out += row_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out;
}

}  // namespace ox
