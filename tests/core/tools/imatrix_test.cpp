// compute_imatrix against llama-imatrix's own files (tests/data/imatrix, make_reference.sh): the
// same entries and token counts (per expert for mixtral-moe, one entry per fused tensor for phi3),
// the sums within 1e-5 relative, the chunk keys and the perplexity line; the chunk options and errors.
#include "core/tools/imatrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/shared_data.h"

namespace ox {
namespace {

// Both sides keep every intermediate in f32 (llama-imatrix -ctk f32 -ctv f32 -fa off); what is left
// is the order of float sums in the matmuls and attention. Measured: at most 1.24e-6 relative on
// stories260K, 9.8e-7 on mixtral-moe, 7.8e-7 on phi3 (f16 caches differ by 6e-4, so this bound
// would catch a wrong cache type or a missed token as well as a wrong column).
constexpr double kRelTol = 1e-5;
constexpr const char* kStory = "tests/data/perplexity/story.txt";

std::string story() {
  const std::vector<uint8_t> bytes = test::read_file_bytes(test::source_path(kStory));
  return std::string(bytes.begin(), bytes.end());
}

std::unique_ptr<Session> f32_session(const std::string& path, int n_ctx) {
  auto model = LoadedModel::open(path);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return nullptr;
  SessionOptions o;
  o.n_ctx = n_ctx;
  o.n_batch = n_ctx;
  o.n_threads = 2;
  o.cache_type_k = DType::F32;
  o.cache_type_v = DType::F32;
  auto session = Session::create(*model, o);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(session).value() : nullptr;
}

Result<ImatrixResult> run(Session& session, const ImatrixOptions& options) {
  auto on_chunk = [](const ImatrixProgress&) { return true; };
  return compute_imatrix(session, story(), options, on_chunk);
}

Imatrix reference(const std::string& name) {
  auto m = read_imatrix(test::source_path("tests/data/imatrix/" + name));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : Imatrix{};
}

void expect_matches(const Imatrix& ours, const Imatrix& ref) {
  EXPECT_EQ(ours.chunk_count, ref.chunk_count);
  EXPECT_EQ(ours.chunk_size, ref.chunk_size);
  EXPECT_EQ(ours.datasets, ref.datasets);
  ASSERT_EQ(ours.entries.size(), ref.entries.size());
  double worst = 0;
  for (const auto& [name, r] : ref.entries) {
    const auto it = ours.entries.find(name);
    ASSERT_NE(it, ours.entries.end()) << name;
    const ImatrixEntry& e = it->second;
    EXPECT_EQ(e.counts, r.counts) << name;
    ASSERT_EQ(e.sums.size(), r.sums.size()) << name;
    for (size_t i = 0; i < r.sums.size(); ++i) {
      const double rel = std::fabs(static_cast<double>(e.sums[i]) - r.sums[i]) / std::max(1e-30, double{r.sums[i]});
      worst = std::max(worst, rel);
      EXPECT_LE(rel, kRelTol) << name << " column " << i << ": " << e.sums[i] << " vs " << r.sums[i];
    }
  }
  testing::Test::RecordProperty("max_relative_difference", std::to_string(worst));
}

// stories260K over story.txt in chunks of 128 tokens (all of them: n_chunks -1), f32 caches.
Result<ImatrixResult> run_stories260K(int n_chunks) {
  const std::string path = test::shared_path("models/stories260K.gguf");
  auto session = f32_session(path, 128);
  if (session == nullptr) return error(ErrorCode::kIo, "no session for " + path);
  ImatrixOptions o;
  o.n_ctx = 128;
  o.n_chunks = n_chunks;
  o.dataset = kStory;
  return run(*session, o);
}

TEST(Imatrix, MatchesLlamaImatrixOnStories260K) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "missing stories260K";
  auto r = run_stories260K(-1);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->n_chunks, 23);
  expect_matches(r->imatrix, reference("stories260K.c128.f32.imatrix.gguf"));
  // llama-imatrix printed "Final estimate: PPL = 4.7542 +/- 0.22289" (stories260K.c128.f32.ref).
  EXPECT_EQ(strfmt("%.4f +/- %.5f", r->stats.ppl(), r->stats.ppl_error()), "4.7542 +/- 0.22289");
}

TEST(Imatrix, MatchesLlamaImatrixOnExpertsAndFusedTensors) {
  for (const char* name : {"mixtral-moe", "phi3"}) {
    SCOPED_TRACE(name);
    const std::string path = test::shared_path(std::string("zoo/models/") + name + ".gguf");
    if (!test::file_exists(path)) GTEST_SKIP() << "missing " << path;
    auto session = f32_session(path, 64);
    ASSERT_NE(session, nullptr);
    ImatrixOptions o;
    o.n_ctx = 64;
    o.n_chunks = 4;
    o.dataset = kStory;
    auto r = run(*session, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    expect_matches(r->imatrix, reference(std::string(name) + ".c64.f32.imatrix.gguf"));
  }
}

// --in-file then -f: llama-imatrix starts its collector from the file and evaluates on top
// (continued.c128.f32.imatrix.gguf, make_merge_reference.sh); ours evaluates, then adds the file.
// The sums differ only by the order of float additions; counts, chunk count and datasets exactly.
TEST(Imatrix, ContinuesFromAnInFileAsLlamaImatrixDoes) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "missing stories260K";
  auto r = run_stories260K(3);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Imatrix start;
  ASSERT_TRUE(merge_imatrix(start, reference("stories260K.c128.f32.imatrix.gguf"), 128, "in").is_ok());
  ASSERT_TRUE(merge_imatrix(start, r->imatrix, 128, kStory).is_ok());
  expect_matches(start, reference("continued.c128.f32.imatrix.gguf"));
}

TEST(Imatrix, ChunkOptions) {
  const std::string path = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(path)) GTEST_SKIP() << "missing " << path;
  auto session = f32_session(path, 128);
  ASSERT_NE(session, nullptr);
  ImatrixOptions o;
  o.n_ctx = 128;
  o.n_chunks = 2;
  o.compute_ppl = false;
  auto two = run(*session, o);
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->imatrix.chunk_count, 2u);
  EXPECT_EQ(two->imatrix.entries.at("blk.0.attn_q.weight").counts, std::vector<int64_t>{256});
  EXPECT_EQ(two->stats.count, 0);
  EXPECT_TRUE(two->imatrix.datasets.empty());
  // Chunk 2 alone (--chunk 1 --chunks 1) is what chunks 1-2 add to chunk 1.
  o.n_chunks = 1;
  auto first = run(*session, o);
  o.from_chunk = 1;
  auto second = run(*session, o);
  ASSERT_TRUE(first.ok() && second.ok());
  for (const auto& [name, e] : two->imatrix.entries) {
    const ImatrixEntry& a = first->imatrix.entries.at(name);
    const ImatrixEntry& b = second->imatrix.entries.at(name);
    EXPECT_EQ(b.counts, std::vector<int64_t>{128}) << name;
    for (size_t i = 0; i < e.sums.size(); ++i) {
      EXPECT_NEAR(a.sums[i] + b.sums[i], e.sums[i], kRelTol * e.sums[i]) << name << " " << i;
    }
  }
  // --process-output adds output.weight, over every token of every chunk; the perplexity is unchanged.
  ImatrixOptions out;
  out.n_ctx = 128;
  out.n_chunks = 3;
  out.process_output = true;
  auto with = run(*session, out);
  out.process_output = false;
  auto without = run(*session, out);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_EQ(with->imatrix.entries.count("output.weight"), 1u);
  EXPECT_EQ(with->imatrix.entries.at("output.weight").counts, std::vector<int64_t>{3 * 128});
  EXPECT_EQ(without->imatrix.entries.count("output.weight"), 0u);
  EXPECT_EQ(with->stats.nll, without->stats.nll);
}

TEST(Imatrix, Errors) {
  const std::string path = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(path)) GTEST_SKIP() << "missing " << path;
  auto session = f32_session(path, 128);
  ASSERT_NE(session, nullptr);
  auto on_chunk = [](const ImatrixProgress&) { return true; };
  ImatrixOptions o;
  o.n_ctx = 128;
  auto r = compute_imatrix(*session, "Once upon a time.", o, on_chunk);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs at least 256"), std::string::npos) << r.status().message();
  o.from_chunk = 22;  // 2948 tokens: (22 + 2) * 128 >= 2948
  r = run(*session, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("skipping 22 chunks"), std::string::npos) << r.status().message();
  o.from_chunk = 0;
  o.n_chunks = 0;
  EXPECT_EQ(run(*session, o).status().code(), ErrorCode::kInvalidArgument);
  o.n_chunks = -1;
  o.n_ctx = 256;  // above the session's context
  EXPECT_EQ(run(*session, o).status().code(), ErrorCode::kInvalidArgument);
  o.n_ctx = 128;
  auto stop = [](const ImatrixProgress& p) { return p.chunk < 2; };
  EXPECT_EQ(compute_imatrix(*session, story(), o, stop).status().code(), ErrorCode::kAborted);
  // The observer is gone afterwards: the session evaluates as before.
  const int32_t tokens[] = {1, 2, 3};
  EXPECT_TRUE(session->truncate(0).is_ok());
  EXPECT_TRUE(session->eval(tokens).is_ok());
}

}  // namespace
}  // namespace ox
