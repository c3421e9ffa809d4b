// run_tokenize_bench / tokenize_bench_json: the token count agrees with llama.cpp's vectors, the
// JSON carries every field the peer benchmark reads, throughput statistics, and argument errors.
#include "core/tools/tokenize_bench.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/gguf/gguf.h"
#include "tests/core/tokenizer/vocab_cases.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::unique_ptr<tok::Tokenizer> load_llama_spm() {
  auto file = gguf::GgufFile::open(test::vocab_path("llama-spm"));
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  auto t = tok::Tokenizer::from_gguf(**file);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : nullptr;
}

TEST(ThroughputMbps, MeanAndSampleSd) {
  // 2e6 bytes in 1 s and 0.5 s: 2 and 4 MB/s; mean 3, sample sd sqrt(2).
  const std::vector<double> seconds = {1.0, 0.5};
  const ThroughputStats s = throughput_mbps(2000000, seconds);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_NEAR(s.sd, 1.41421356237, 1e-9);
  const std::vector<double> one = {0.25};
  const ThroughputStats t = throughput_mbps(1000000, one);
  EXPECT_DOUBLE_EQ(t.mean, 4.0);
  EXPECT_EQ(t.sd, 0.0);
  const std::vector<double> none = {0.0};
  EXPECT_EQ(throughput_mbps(1000, none).mean, 0.0);
}

TEST(TokenizeBench, CountMatchesLlamaCppVectorAndJsonHasFields) {
  if (!test::file_exists(test::vocab_path("llama-spm"))) GTEST_SKIP() << "shared vocab data not found";
  const std::vector<test::VocabCase> cases = test::read_vocab_cases("llama-spm");
  ASSERT_FALSE(cases.empty());
  const test::VocabCase* longest = &cases[0];
  for (const test::VocabCase& c : cases) {
    if (c.ids.size() > longest->ids.size()) longest = &c;
  }
  ASSERT_GT(longest->ids.size(), 10u);
  std::unique_ptr<tok::Tokenizer> tokenizer = load_llama_spm();
  ASSERT_NE(tokenizer, nullptr);

  TokenizeBenchOptions options;
  options.repetitions = 3;
  auto r = run_tokenize_bench(*tokenizer, "ggml-vocab-llama-spm.gguf", longest->text, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // The .out vectors are llama.cpp's ids without BOS, special tokens not parsed.
  EXPECT_EQ(r->tokens, longest->ids.size());
  EXPECT_EQ(r->bytes, longest->text.size());
  EXPECT_EQ(r->seconds.size(), 3u);
  EXPECT_EQ(r->type, "llama");
  EXPECT_GT(r->mbps_mean, 0.0);

  const nlohmann::json j = nlohmann::json::parse(tokenize_bench_json(*r), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  for (const char* key : {"vocab", "type", "pre", "add_special", "parse_special", "bytes", "tokens", "repetitions",
                          "seconds", "mbps_mean", "mbps_sd"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j.value("vocab", ""), "ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(j.value("tokens", uint64_t{0}), longest->ids.size());
  EXPECT_EQ(j.value("repetitions", 0), 3);
  EXPECT_FALSE(j.value("add_special", true));
  ASSERT_TRUE(j["seconds"].is_array());
  EXPECT_EQ(j["seconds"].size(), 3u);

  // With BOS added the count grows by exactly one (llama-spm adds BOS by default).
  options.add_special = true;
  options.repetitions = 1;
  options.warmup = false;
  auto with_bos = run_tokenize_bench(*tokenizer, "x", longest->text, options);
  ASSERT_TRUE(with_bos.ok()) << with_bos.status().message();
  EXPECT_EQ(with_bos->tokens, longest->ids.size() + 1);
  EXPECT_EQ(with_bos->seconds.size(), 1u);
}

TEST(TokenizeBench, RejectsBadArguments) {
  if (!test::file_exists(test::vocab_path("llama-spm"))) GTEST_SKIP() << "shared vocab data not found";
  std::unique_ptr<tok::Tokenizer> tokenizer = load_llama_spm();
  ASSERT_NE(tokenizer, nullptr);
  TokenizeBenchOptions options;
  options.repetitions = 0;
  auto zero = run_tokenize_bench(*tokenizer, "v", "Hello world", options);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("repetitions"), std::string::npos);
  options.repetitions = 2;
  auto empty = run_tokenize_bench(*tokenizer, "v", "", options);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
}

}  // namespace
}  // namespace ox
