// The embedding path against llama.cpp (tests/data/embeddings, made by make_reference.sh there):
// each case's tiny parity model (`oxidize synth --arch A`, F32 weights) is regenerated from the
// recorded seed and embedded by Embedder, all prompts packed into one pass and each on its own;
// every vector must be within cosine 0.99999 and 1e-4 (largest absolute difference) of
// llama-embedding's. Rank cases compare the rerank score of every (query, document) pair, and
// check that the order rank_documents gives (what `oxidize rerank`, the server and the JS engine
// return) is llama.cpp's wherever its scores are well apart. Also the embedding path's errors.
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
#include "core/session/embedding_api.h"
#include "core/session/session.h"
#include "core/tools/synth.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

constexpr double kMinCosine = 0.99999;
constexpr double kMaxAbs = 1e-4;
// Two documents whose reference scores differ by more than this are ordered as llama.cpp orders
// them: 5x the score tolerance (engines within kMaxAbs of the reference order pairs 2 * kMaxAbs apart).
constexpr double kSeparated = 5 * kMaxAbs;

struct Reference {
  std::string synth;  // --arch A --seed S --vocab PATH [--vocab-size N] --weight-std W
  Pooling pooling = Pooling::kNone;
  int normalize = 2;
  std::string prompts;  // the inputs' file in tests/data/embeddings
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
    if (line.rfind("prompts: ", 0) == 0) r.prompts = value("prompts: ");
    if (line.rfind("vector ", 0) == 0) {
      std::istringstream in(line.substr(line.find(':') + 1));
      std::vector<float>& v = r.vectors.emplace_back();
      for (float x; in >> x;) v.push_back(x);
    }
  }
  // Files from before the "prompts:" line: the default inputs of their pooling.
  if (r.prompts.empty()) r.prompts = r.pooling == Pooling::kRank ? "rerank_pairs.txt" : "prompts.txt";
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

// rerank_pairs.txt / rerank_docs.txt: "query<TAB>document" lines, a query's lines together.
struct QueryDocuments {
  std::string query;
  std::vector<std::string> documents;
  size_t first = 0;  // line (and reference score) of the first document
};

std::vector<QueryDocuments> group_pairs(const std::vector<std::string>& lines) {
  std::vector<QueryDocuments> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t tab = lines[i].find('\t');
    if (tab == std::string::npos) {
      ADD_FAILURE() << "rerank pairs line " << i << " has no tab: " << lines[i];
      continue;
    }
    const std::string query = lines[i].substr(0, tab);
    if (out.empty() || out.back().query != query) out.push_back({query, {}, i});
    out.back().documents.push_back(lines[i].substr(tab + 1));
  }
  return out;
}

// Pairs of documents whose reference scores are more than kSeparated apart (of all pairs).
struct PairCount {
  int separated = 0, all = 0;
};
PairCount count_separated(const std::vector<float>& reference) {
  PairCount c;
  for (size_t i = 0; i < reference.size(); ++i) {
    for (size_t j = i + 1; j < reference.size(); ++j) {
      ++c.all;
      if (std::fabs(double{reference[i]} - reference[j]) > kSeparated) ++c.separated;
    }
  }
  return c;
}

// rank_documents over our scores (the order every rerank API returns) puts document i before j
// whenever llama.cpp's score of i is higher by more than kSeparated.
void expect_llama_cpp_order(const std::vector<float>& ours, const std::vector<float>& reference,
                            const std::string& what) {
  ASSERT_EQ(ours.size(), reference.size()) << what;
  const std::vector<RankedDocument> ranked = rank_documents(ours, 0);
  ASSERT_EQ(ranked.size(), ours.size()) << what;
  std::vector<size_t> place(ours.size());
  for (size_t k = 0; k < ranked.size(); ++k) place.at(static_cast<size_t>(ranked[k].index)) = k;
  for (size_t i = 0; i < reference.size(); ++i) {
    for (size_t j = 0; j < reference.size(); ++j) {
      if (reference[i] - double{reference[j]} > kSeparated) {
        EXPECT_LT(place[i], place[j]) << what << ": document " << i << " (llama.cpp " << reference[i] << ", ours "
                                      << ours[i] << ") should rank above document " << j << " (llama.cpp "
                                      << reference[j] << ", ours " << ours[j] << ")";
      }
    }
  }
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
  const std::vector<std::string> lines = read_lines(test::source_path("tests/data/embeddings/" + r.prompts));
  if (r.pooling == Pooling::kRank) {
    // The order users see comes from the default numerics (the CLI's, the server's, the JS engine's).
    EmbedderOptions f32_options = options;
    f32_options.numerics = Numerics::kF32;
    Result<std::unique_ptr<Embedder>> f32 = Embedder::create(model, f32_options);
    ASSERT_TRUE(f32.ok()) << f32.status().message();
    size_t n_pairs = 0;
    for (const QueryDocuments& q : group_pairs(lines)) {
      ASSERT_LE(q.first + q.documents.size(), r.vectors.size()) << name << ": more pairs than reference scores";
      std::vector<float> reference;
      for (size_t i = 0; i < q.documents.size(); ++i) reference.push_back(r.vectors[q.first + i].at(0));
      Result<RerankResult> s = e.value()->rerank(q.query, q.documents);
      ASSERT_TRUE(s.ok()) << s.status().message();
      ASSERT_EQ(s.value().scores.size(), q.documents.size());
      for (size_t i = 0; i < q.documents.size(); ++i) {
        expect_close({s.value().scores[i]}, r.vectors[q.first + i], 1, name + " score " + std::to_string(q.first + i));
      }
      expect_llama_cpp_order(s.value().scores, reference, name + " '" + q.query + "'");
      Result<RerankResult> s32 = f32.value()->rerank(q.query, q.documents);
      ASSERT_TRUE(s32.ok()) << s32.status().message();
      expect_llama_cpp_order(s32.value().scores, reference, name + " '" + q.query + "', f32 numerics");
      n_pairs += q.documents.size();
    }
    EXPECT_EQ(n_pairs, r.vectors.size()) << name;
    std::printf("  %s: %zu pairs, max |score - llama.cpp| %.2e\n", name.c_str(), n_pairs, g_worst.max_abs);
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
                         testing::Values("bert-cls", "bert-mean", "bert-none", "bert-rank", "bert-rerank", "qwen3-last",
                                         "llama-mean", "nomic-bert-mean", "qwen3-rank", "jina-bert-v2-mean",
                                         "jina-bert-v2-rank", "nomic-bert-moe-mean", "jina-bert-v3-mean", "neo-bert-cls",
                                         "eurobert-mean", "gemma-embedding-mean", "modern-bert-mean",
                                         "modern-bert-rank", "t5encoder-mean"),
                         [](const testing::TestParamInfo<const char*>& i) {
                           std::string s = i.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// The cross-encoder case's data keeps the order check strong: several documents per query, and
// nearly every pair of them further apart in llama.cpp's scores than kSeparated (checked here so
// that regenerated references cannot quietly leave nothing to order).
TEST(RerankOrder, ReferenceScoresAreWellApart) {
  const Reference r = read_reference("bert-rerank");
  const std::vector<std::string> lines = read_lines(test::source_path("tests/data/embeddings/" + r.prompts));
  const std::vector<QueryDocuments> queries = group_pairs(lines);
  ASSERT_GE(queries.size(), 2u);
  PairCount total;
  for (const QueryDocuments& q : queries) {
    EXPECT_GE(q.documents.size(), 6u) << q.query;
    std::vector<float> reference;
    for (size_t i = 0; i < q.documents.size(); ++i) reference.push_back(r.vectors.at(q.first + i).at(0));
    const PairCount c = count_separated(reference);
    total.separated += c.separated;
    total.all += c.all;
  }
  EXPECT_GE(total.separated * 10, total.all * 9) << total.separated << " of " << total.all << " pairs well apart";
}

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
