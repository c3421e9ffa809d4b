// Tokenization throughput: times Tokenizer::encode on text already in memory (no file reading, no
// vocabulary loading in the timing). Used by `oxidize tokenize --bench R` and bench/peers/tokenize.mjs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/tokenizer/tokenizer.h"

namespace ox {

struct TokenizeBenchOptions {
  int repetitions = 5;
  bool warmup = true;          // one untimed encode first (page faults, caches, wasm tier-up)
  bool add_special = false;    // BOS/EOS as encode() would add them
  bool parse_special = false;  // control-token texts become control tokens
};

struct TokenizeBenchResult {
  std::string vocab;  // file name of the GGUF
  std::string type;   // tokenizer.ggml.model ("llama", "gpt2", "bert", ...)
  std::string pre;    // tokenizer.ggml.pre ("" when absent)
  bool add_special = false;
  bool parse_special = false;
  uint64_t bytes = 0;   // UTF-8 bytes of the text
  uint64_t tokens = 0;  // ids encode() returned (the same every repetition)
  std::vector<double> seconds;  // wall-clock seconds of each timed encode()
  double mbps_mean = 0;         // mean over repetitions of bytes / 1e6 / seconds
  double mbps_sd = 0;           // sample standard deviation of the same (0 for one repetition)
};

struct ThroughputStats {
  double mean = 0;
  double sd = 0;
};
// Mean and sample sd of bytes / 1e6 / s over the samples; non-positive times are skipped.
ThroughputStats throughput_mbps(uint64_t bytes, std::span<const double> seconds);

// Encodes `text` (warm-up, then `repetitions` timed runs). Fails on repetitions < 1, empty text,
// an encode error, or (a tokenizer bug) a token count that changes between runs.
Result<TokenizeBenchResult> run_tokenize_bench(const tok::Tokenizer& tokenizer, std::string_view vocab_name,
                                               std::string_view text, const TokenizeBenchOptions& options);

// One JSON object: vocab, type, pre, add_special, parse_special, bytes, tokens, repetitions, seconds,
// mbps_mean, mbps_sd.
std::string tokenize_bench_json(const TokenizeBenchResult& result);

}  // namespace ox
