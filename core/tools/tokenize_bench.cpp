// run_tokenize_bench: wall-clock time of Tokenizer::encode over a whole text, repeated.
#include "core/tools/tokenize_bench.h"

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

namespace ox {

ThroughputStats throughput_mbps(uint64_t bytes, std::span<const double> seconds) {
  std::vector<double> rates;
  for (double s : seconds) {
    if (s > 0) rates.push_back(static_cast<double>(bytes) / 1e6 / s);
  }
  ThroughputStats out;
  if (rates.empty()) return out;
  for (double r : rates) out.mean += r;
  out.mean /= static_cast<double>(rates.size());
  if (rates.size() > 1) {
    double var = 0;
    for (double r : rates) var += (r - out.mean) * (r - out.mean);
    out.sd = std::sqrt(var / static_cast<double>(rates.size() - 1));
  }
  return out;
}

Result<TokenizeBenchResult> run_tokenize_bench(const tok::Tokenizer& tokenizer, std::string_view vocab_name,
                                               std::string_view text, const TokenizeBenchOptions& options) {
  if (options.repetitions < 1) {
    return error(ErrorCode::kInvalidArgument, strfmt("repetitions must be >= 1, got %d", options.repetitions));
  }
  // MB/s of nothing is meaningless, and a typo'd path to an empty file should not look fast.
  if (text.empty()) return error(ErrorCode::kInvalidArgument, "the text to tokenize is empty");

  TokenizeBenchResult r;
  r.vocab = std::string(vocab_name);
  r.type = std::string(tokenizer.model_name());
  r.pre = std::string(tokenizer.pre_name());
  r.add_special = options.add_special;
  r.parse_special = options.parse_special;
  r.bytes = text.size();

  bool have_count = false;
  const int total = options.repetitions + (options.warmup ? 1 : 0);
  for (int run = 0; run < total; ++run) {
    const auto start = std::chrono::steady_clock::now();
    Result<std::vector<int32_t>> ids = tokenizer.encode(text, options.add_special, options.parse_special);
    const auto stop = std::chrono::steady_clock::now();
    if (!ids.ok()) return ids.status();
    const uint64_t n = ids->size();
    // encode() is deterministic: a different count on the same bytes would be a tokenizer bug, and
    // the benchmark would be timing different work.
    if (have_count && n != r.tokens) {
      return error(ErrorCode::kInternal,
                   strfmt("token count changed between runs: %llu then %llu", static_cast<unsigned long long>(r.tokens),
                          static_cast<unsigned long long>(n)));
    }
    r.tokens = n;
    have_count = true;
    if (options.warmup && run == 0) continue;
    r.seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  const ThroughputStats stats = throughput_mbps(r.bytes, r.seconds);
  r.mbps_mean = stats.mean;
  r.mbps_sd = stats.sd;
  return r;
}

std::string tokenize_bench_json(const TokenizeBenchResult& r) {
  nlohmann::ordered_json out = {
      {"vocab", r.vocab},
      {"type", r.type},
      {"pre", r.pre},
      {"add_special", r.add_special},
      {"parse_special", r.parse_special},
      {"bytes", r.bytes},
      {"tokens", r.tokens},
      {"repetitions", static_cast<uint64_t>(r.seconds.size())},
      {"seconds", r.seconds},
      {"mbps_mean", r.mbps_mean},
      {"mbps_sd", r.mbps_sd},
  };
  return out.dump();
}

}  // namespace ox
