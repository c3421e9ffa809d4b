// Tokenization throughput (MB/s of input text) per tokenizer family, on a mixed English + code +
// CJK + emoji text built from llama.cpp's tokenizer test strings (../shared/vocab/*.inp), repeated
// to about 1 MB. Run: oxidize_microbench --benchmark_filter=Tokenize
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "core/gguf/gguf.h"
#include "core/tokenizer/tokenizer.h"

namespace {

std::string shared_dir() {
  const char* env = std::getenv("OXIDIZE_SHARED");
  return (env != nullptr && *env != '\0') ? std::string(env) : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
}

std::string read_all(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// Test strings of a few vocabularies (with the separators turned into newlines), plus a block of
// C++ source, repeated to ~1 MB.
const std::string& corpus() {
  static const std::string text = [] {
    std::string unit;
    for (const char* name : {"llama-spm", "qwen35", "deepseek-llm"}) {
      std::string inp = read_all(shared_dir() + "/vocab/ggml-vocab-" + name + ".gguf.inp");
      const std::string sep = "__ggml_vocab_test__";
      for (size_t p; (p = inp.find(sep)) != std::string::npos;) inp.replace(p, sep.size(), "");
      unit += inp;
    }
    unit += read_all(std::string(OXIDIZE_SOURCE_DIR) + "/core/tokenizer/pre_tokenizer.cpp");
    std::string text;
    if (unit.empty()) return text;
    while (text.size() < (1u << 20)) text += unit;
    return text;
  }();
  return text;
}

const ox::tok::Tokenizer* load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ox::tok::Tokenizer>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<ox::tok::Tokenizer> tok;
  auto file = ox::gguf::GgufFile::open(shared_dir() + "/vocab/ggml-vocab-" + name + ".gguf");
  if (file.ok()) {
    auto t = ox::tok::Tokenizer::from_gguf(**file);
    if (t.ok()) tok = std::move(t).value();
  }
  return cache.emplace(name, std::move(tok)).first->second.get();
}

void BM_Tokenize(benchmark::State& state, const char* vocab) {
  const ox::tok::Tokenizer* tok = load(vocab);
  const std::string& text = corpus();
  if (tok == nullptr || text.empty()) {
    state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
    return;
  }
  size_t n_tokens = 0;
  for (auto _ : state) {
    auto ids = tok->encode(text, false, true);
    n_tokens = ids.ok() ? ids->size() : 0;
    benchmark::DoNotOptimize(n_tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.counters["tokens"] = static_cast<double>(n_tokens);
}

void BM_Detokenize(benchmark::State& state, const char* vocab) {
  const ox::tok::Tokenizer* tok = load(vocab);
  const std::string& text = corpus();
  if (tok == nullptr || text.empty()) {
    state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
    return;
  }
  const std::vector<int32_t> ids = tok->encode(text, false, true).value();
  for (auto _ : state) {
    auto out = tok->decode(ids, false);
    benchmark::DoNotOptimize(out.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

BENCHMARK_CAPTURE(BM_Tokenize, spm_llama2, "llama-spm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_llama3, "llama-bpe")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_qwen2, "qwen2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_qwen35, "qwen35")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_gpt2, "gpt-2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_deepseek_llm, "deepseek-llm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, bpe_gemma4, "gemma-4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, wordpiece_bert, "bert-bge")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tokenize, unigram_xlmr, "nomic-bert-moe")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Detokenize, spm_llama2, "llama-spm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Detokenize, bpe_llama3, "llama-bpe")->Unit(benchmark::kMillisecond);

}  // namespace
