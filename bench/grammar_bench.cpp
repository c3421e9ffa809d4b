// Grammar masking cost per token: a JSON grammar (json_object_gbnf) over the 151k-token qwen2
// vocabulary of ../shared/vocab, against the cost of nothing (one pass over the candidates).
// Run: oxidize_microbench --benchmark_filter=Grammar
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/gguf/gguf.h"
#include "core/sampler/grammar_constraint.h"
#include "core/sampler/json_schema.h"
#include "core/tokenizer/tokenizer.h"

namespace {

struct Vocab {
  std::shared_ptr<const ox::TokenTrie> trie;
  std::vector<int32_t> eog;
  std::unique_ptr<ox::tok::Tokenizer> tok;
};

const Vocab* qwen2() {
  static const std::unique_ptr<Vocab> vocab = []() -> std::unique_ptr<Vocab> {
    const char* env = std::getenv("OXIDIZE_SHARED");
    const std::string dir = (env != nullptr && *env != '\0') ? env : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
    auto file = ox::gguf::GgufFile::open(dir + "/vocab/ggml-vocab-qwen2.gguf");
    if (!file.ok()) return nullptr;
    auto tok = ox::tok::Tokenizer::from_gguf(**file);
    if (!tok.ok()) return nullptr;
    auto v = std::make_unique<Vocab>();
    v->tok = std::move(tok).value();
    std::vector<std::string> pieces;
    std::vector<int32_t> control;
    for (int32_t id = 0; id < v->tok->n_vocab(); ++id) {
      auto piece = v->tok->token_to_piece(id, /*render_special=*/true);
      pieces.push_back(piece.ok() ? *piece : std::string());
      if (v->tok->is_control(id)) control.push_back(id);
      if (v->tok->is_eog(id)) v->eog.push_back(id);
    }
    v->trie = ox::TokenTrie::build(std::move(pieces), control);
    return v;
  }();
  return vocab.get();
}

std::unique_ptr<ox::TokenConstraint> json_constraint(const Vocab& v) {
  auto c = ox::make_grammar_constraint(ox::json_object_gbnf(), v.trie, v.eog);
  return c.ok() ? std::move(c).value() : nullptr;
}

std::vector<ox::TokenCandidate> all_candidates(int32_t n) {
  std::vector<ox::TokenCandidate> out(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = {i, 0.0f, 0.0f};
  return out;
}

// The baseline: what a sampler stage costs that looks at every candidate and changes nothing.
void BM_GrammarNone(benchmark::State& state) {
  const Vocab* v = qwen2();
  if (v == nullptr) return state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
  std::vector<ox::TokenCandidate> cands = all_candidates(v->trie->n_vocab());
  for (auto _ : state) {
    for (ox::TokenCandidate& c : cands) c.logit = std::isnan(c.logit) ? -INFINITY : c.logit;
    benchmark::DoNotOptimize(cands.data());
  }
}

// Mask of the whole vocabulary after `prefix` (memo warm: the state was seen before).
void BM_GrammarMaskAfter(benchmark::State& state, const char* prefix) {
  const Vocab* v = qwen2();
  if (v == nullptr) return state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
  auto c = json_constraint(*v);
  auto* g = static_cast<ox::GrammarConstraint*>(c.get());
  if (!g->accept_text(prefix).is_ok()) return state.SkipWithError("prefix refused");
  std::vector<ox::TokenCandidate> cands = all_candidates(v->trie->n_vocab());
  size_t n_allowed = 0;
  for (auto _ : state) {
    g->accept_text("").is_ok();  // invalidates the cached mask, keeps the state
    c->apply(cands);
    benchmark::DoNotOptimize(cands.data());
  }
  for (uint8_t a : g->allowed_tokens()) n_allowed += a;
  state.counters["allowed"] = static_cast<double>(n_allowed);
}

// A whole JSON document token by token: mask then accept, from a fresh constraint each time
// (so the memo is cold at first, as at the start of a generation). Reports the time per token.
void BM_GrammarJsonDocument(benchmark::State& state) {
  const Vocab* v = qwen2();
  if (v == nullptr) return state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
  const std::string doc =
      R"({"name": "Ada Lovelace", "born": 1815, "tags": ["math", "poetry"], "notes": {"engine": "analytical", "ok": true, "ratio": -0.25e2}})";
  const std::vector<int32_t> ids = v->tok->encode(doc, false, false).value();
  std::vector<ox::TokenCandidate> cands = all_candidates(v->trie->n_vocab());
  for (auto _ : state) {
    auto c = json_constraint(*v);
    for (int32_t id : ids) {
      c->apply(cands);
      if (!c->accept(id).is_ok()) return state.SkipWithError("document refused by the grammar");
    }
    benchmark::DoNotOptimize(cands.data());
  }
  state.counters["tokens"] = static_cast<double>(ids.size());
  // seconds per token (printed with an SI prefix: 4.2m is 4.2 ms)
  state.counters["per_token"] = benchmark::Counter(static_cast<double>(ids.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_GrammarTrieBuild(benchmark::State& state) {
  const Vocab* v = qwen2();
  if (v == nullptr) return state.SkipWithError("shared vocab data not found (set OXIDIZE_SHARED)");
  std::vector<std::string> pieces;
  for (int32_t id = 0; id < v->trie->n_vocab(); ++id) pieces.push_back(v->trie->piece(id));
  for (auto _ : state) benchmark::DoNotOptimize(ox::TokenTrie::build(pieces).get());
  state.counters["nodes"] = static_cast<double>(v->trie->nodes().size());
}

BENCHMARK(BM_GrammarNone)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GrammarMaskAfter, object_start, "")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GrammarMaskAfter, in_key, "{\"")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GrammarMaskAfter, after_colon, "{\"a\": ")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GrammarMaskAfter, in_number, "{\"a\": 12")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GrammarJsonDocument)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GrammarTrieBuild)->Unit(benchmark::kMillisecond);

}  // namespace
