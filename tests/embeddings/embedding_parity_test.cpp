// The embedding path against llama.cpp (tests/data/embeddings, made by make_reference.sh there):
// each case's tiny parity model (`oxidize synth --arch A`, F32 weights) is regenerated from the
// recorded seed and embedded by Embedder, all prompts packed into one pass and each on its own;
// every vector must be within cosine 0.99999 and 1e-4 (largest absolute difference) of
// llama-embedding's. Rank cases compare the rerank score. Also the embedding path's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/session/embedding.h"
#include "core/session/session.h"
#include "core/tools/synth.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

constexpr double kMinCosine = 0.99999;
constexpr double kMaxAbs = 1e-4;

struct Reference {
  std::string synth;  // --arch A --seed S --vocab PATH [--vocab-size N] --weight-std W
  Pooling pooling = Pooling::kNone;
  int normalize = 2;
  std::vector<std::vector<float>> vectors;
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Reference read_reference(const std::string& name) {
  Reference r;
  for (const std::string& line : read_lines(test::source_path("tests/data/embeddings/" + name + ".txt"))) {
    auto value = [&](const char* key) { return line.substr(std::string(key).size()); };
    if (line.rfind("synth: ", 0) == 0) r.synth = value("synth: ");
    if (line.rfind("pooling: ", 0) == 0) r.pooling = parse_pooling(value("pooling: "), "reference").value();
    if (line.rfind("normalize: ", 0) == 0) r.normalize = std::atoi(value("normalize: ").c_str());
    if (line.rfind("vector ", 0) == 0) {
      std::istringstream in(line.substr(line.find(':') + 1));
      std::vector<float>& v = r.vectors.emplace_back();
      for (float x; in >> x;) v.push_back(x);
    }
  }
  return r;
}

std::string option(const std::string& synth, const std::string& flag) {
  const size_t at = synth.find(flag + " ");
  if (at == std::string::npos) return "";
  const size_t begin = at + flag.size() + 1;
  return synth.substr(begin, synth.find(' ', begin) - begin);
}

std::shared_ptr<const LoadedModel> parity_model(const std::string& name, const Reference& r) {
  SynthOptions o;
  o.arch = option(r.synth, "--arch");
  o.shape = "tiny-arch";  // what `synth --arch` implies
  o.seed = std::strtoull(option(r.synth, "--seed").c_str(), nullptr, 10);
  o.weight_std = std::strtof(option(r.synth, "--weight-std").c_str(), nullptr);
  o.vocab_path = test::shared_path(option(r.synth, "--vocab"));
  o.vocab_size = static_cast<uint32_t>(std::strtoul(option(r.synth, "--vocab-size").c_str(), nullptr, 10));
  o.out_path = testing::TempDir() + "oxidize_embed_" + name + ".gguf";
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << st.message();
  Result<std::shared_ptr<const LoadedModel>> m = LoadedModel::open(o.out_path);
  EXPECT_TRUE(m.ok()) << m.status().message();
  std::remove(o.out_path.c_str());
  return m.ok() ? m.value() : nullptr;
}

// The worst agreement seen by a case (printed: how far inside the bounds each case sits).
struct Worst {
  double cosine = 1, max_abs = 0;
};
Worst g_worst;

void expect_close(const std::vector<float>& ours, const std::vector<float>& ref, size_t n, const std::string& what) {
  ASSERT_GE(ours.size(), n) << what;
  ASSERT_GE(ref.size(), n) << what;
  double dot = 0, a2 = 0, b2 = 0, max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += double{ours[i]} * ref[i];
    a2 += double{ours[i]} * ours[i];
    b2 += double{ref[i]} * ref[i];
    max_abs = std::max(max_abs, std::fabs(double{ours[i]} - ref[i]));
  }
  if (n > 1) {
    EXPECT_GE(dot / std::sqrt(a2 * b2), kMinCosine) << what;
    g_worst.cosine = std::min(g_worst.cosine, dot / std::sqrt(a2 * b2));
  }
  g_worst.max_abs = std::max(g_worst.max_abs, max_abs);
  EXPECT_LE(max_abs, kMaxAbs) << what;
}

class EmbeddingParity : public testing::TestWithParam<const char*> {};

TEST_P(EmbeddingParity, MatchesLlamaCpp) {
  const std::string name = GetParam();
  const Reference r = read_reference(name);
  ASSERT_FALSE(r.synth.empty()) << name << ": no reference";
  g_worst = Worst{};
  std::shared_ptr<const LoadedModel> model = parity_model(name, r);
  ASSERT_NE(model, nullptr);
  EmbedderOptions options;
  options.pooling = r.pooling;
  options.n_ctx = 512;
  options.n_threads = 2;
  // llama.cpp's rounding points (an encoder's attention sums in f16, GELU's f16 table): encoders then
  // agree to 1e-7..6e-6 (to 8e-5 with f32 sums); the decoders' attention stays f32, as llama.cpp's.
  options.numerics = Numerics::kLlamaCpp;
  Result<std::unique_ptr<Embedder>> e = Embedder::create(model, options);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const bool rank = r.pooling == Pooling::kRank;
  const std::vector<std::string> lines =
      read_lines(test::source_path(rank ? "tests/data/embeddings/rerank_pairs.txt" : "tests/data/embeddings/prompts.txt"));
  if (rank) {
    std::vector<std::string> docs;
    std::string query;
    for (const std::string& l : lines) {
      query = l.substr(0, l.find('\t'));
      docs.push_back(l.substr(l.find('\t') + 1));
    }
    Result<RerankResult> s = e.value()->rerank(query, docs);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_EQ(s.value().scores.size(), r.vectors.size());
    for (size_t i = 0; i < docs.size(); ++i) {
      expect_close({s.value().scores[i]}, r.vectors[i], 1, name + " score " + std::to_string(i));
    }
    std::printf("  %s: max |score - llama.cpp| %.2e\n", name.c_str(), g_worst.max_abs);
    return;
  }
  EmbedParams params;
  params.normalize = r.normalize;
  Result<EmbeddingResult> all = e.value()->embed(lines, params);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all.value().n_forward_passes, 1);
  ASSERT_EQ(all.value().vectors.size(), r.vectors.size()) << name;
  for (size_t i = 0; i < r.vectors.size(); ++i) {
    expect_close(all.value().vectors[i], r.vectors[i], r.vectors[i].size(), name + " batched vector " + std::to_string(i));
  }
  // One at a time: the same numbers (a prompt must not see its batch neighbours).
  for (size_t p = 0; p < lines.size(); ++p) {
    Result<EmbeddingResult> one = e.value()->embed(std::span<const std::string>(&lines[p], 1), params);
    ASSERT_TRUE(one.ok()) << one.status().message();
    const size_t first = static_cast<size_t>(all.value().first_vector[p]);
    for (size_t k = 0; k < one.value().vectors.size(); ++k) {
      expect_close(one.value().vectors[k], r.vectors[first + k], r.vectors[first + k].size(),
                   name + " prompt " + std::to_string(p) + " alone, vector " + std::to_string(k));
    }
  }
  std::printf("  %s: min cosine %.8f, max |difference| %.2e\n", name.c_str(), g_worst.cosine, g_worst.max_abs);
}

INSTANTIATE_TEST_SUITE_P(Cases, EmbeddingParity,
                         testing::Values("bert-cls", "bert-mean", "bert-none", "bert-rank", "qwen3-last", "llama-mean",
                                         "nomic-bert-mean", "qwen3-rank", "jina-bert-v2-mean", "jina-bert-v2-rank",
                                         "nomic-bert-moe-mean", "jina-bert-v3-mean", "neo-bert-cls", "eurobert-mean",
                                         "gemma-embedding-mean", "modern-bert-mean",
                                         "modern-bert-rank", "t5encoder-mean"),
                         [](const testing::TestParamInfo<const char*>& i) {
                           std::string s = i.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// The errors the issue lists, each naming what is wrong.
TEST(EmbeddingErrors, NameTheProblem) {
  const Reference r = read_reference("qwen3-last");
  std::shared_ptr<const LoadedModel> decoder = parity_model("errors-qwen3", r);
  ASSERT_NE(decoder, nullptr);
  Result<std::unique_ptr<Embedder>> no_pooling = Embedder::create(decoder, {});
  ASSERT_FALSE(no_pooling.ok());
  EXPECT_NE(no_pooling.status().message().find("--pooling"), std::string::npos) << no_pooling.status().message();
  // llama has no classification head (qwen3's parity model has Qwen3-Reranker's cls.output).
  std::shared_ptr<const LoadedModel> headless = parity_model("errors-llama", read_reference("llama-mean"));
  ASSERT_NE(headless, nullptr);
  EmbedderOptions rank;
  rank.pooling = Pooling::kRank;
  Result<std::unique_ptr<Embedder>> no_head = Embedder::create(headless, rank);
  ASSERT_FALSE(no_head.ok());
  EXPECT_NE(no_head.status().message().find("cls"), std::string::npos) << no_head.status().message();

  EmbedderOptions small;
  small.pooling = Pooling::kMean;
  small.n_ctx = 8;
  Result<std::unique_ptr<Embedder>> e = Embedder::create(decoder, small);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const std::vector<std::string> empty = {"fine", ""};
  Result<EmbeddingResult> r1 = e.value()->embed(empty);
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.status().message().find("input 1"), std::string::npos) << r1.status().message();
  const std::vector<std::string> long_text = {"once upon a time there was a little girl who lived in a village"};
  Result<EmbeddingResult> r2 = e.value()->embed(long_text);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("context of 8"), std::string::npos) << r2.status().message();
  EmbedParams cut;
  cut.truncate = true;
  Result<EmbeddingResult> r3 = e.value()->embed(long_text, cut);
  ASSERT_TRUE(r3.ok()) << r3.status().message();
  EXPECT_EQ(r3.value().n_tokens[0], 8);
  EXPECT_FALSE(e.value()->embed(std::span<const std::string>()).ok());

  // An encoder cannot generate text: a Session over one is refused by name.
  const Reference b = read_reference("bert-cls");
  std::shared_ptr<const LoadedModel> encoder = parity_model("errors-bert", b);
  ASSERT_NE(encoder, nullptr);
  Result<std::unique_ptr<Session>> session = Session::create(encoder, {});
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("encoder"), std::string::npos) << session.status().message();
}

// Many inputs are packed into as few passes as the context allows.
TEST(EmbeddingBatching, PacksInputsIntoFewPasses) {
  const Reference r = read_reference("llama-mean");
  std::shared_ptr<const LoadedModel> model = parity_model("packing-llama", r);
  ASSERT_NE(model, nullptr);
  EmbedderOptions o;
  o.pooling = Pooling::kMean;
  o.n_ctx = 64;
  Result<std::unique_ptr<Embedder>> e = Embedder::create(model, o);
  ASSERT_TRUE(e.ok()) << e.status().message();
  std::vector<std::vector<int32_t>> inputs(10, std::vector<int32_t>(20, 5));  // 200 tokens, 3 fit a pass
  Result<EmbeddingResult> res = e.value()->embed_tokens(inputs);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res.value().n_forward_passes, 4);
  EXPECT_EQ(res.value().total_tokens, 200);
  for (size_t i = 1; i < inputs.size(); ++i) {  // equal inputs, equal vectors, wherever they were packed
    for (size_t k = 0; k < res.value().vectors[i].size(); ++k) {
      EXPECT_NEAR(res.value().vectors[i][k], res.value().vectors[0][k], 1e-6f) << i;
    }
  }
}

}  // namespace
}  // namespace ox
