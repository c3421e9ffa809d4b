// The request checks and result order shared by the server's and the JS engine's embedding APIs:
// rerank results by descending score with ties in input order (llama-server sorts by score and
// keeps the first top_n), and `dimensions` accepted only at the model's width.
#include "core/session/embedding_api.h"

#include <gtest/gtest.h>

#include <vector>

namespace ox {
namespace {

std::vector<int32_t> indices(const std::vector<RankedDocument>& r) {
  std::vector<int32_t> out;
  for (const RankedDocument& d : r) out.push_back(d.index);
  return out;
}

TEST(RankDocuments, DescendingScoreTiesKeepInputOrder) {
  const std::vector<float> scores = {0.1f, 2.0f, -1.0f, 2.0f, 0.5f};
  EXPECT_EQ(indices(rank_documents(scores, 0)), (std::vector<int32_t>{1, 3, 4, 0, 2}));
  EXPECT_EQ(indices(rank_documents(scores, 2)), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(indices(rank_documents(scores, 99)).size(), 5u);
  EXPECT_FLOAT_EQ(rank_documents(scores, 1)[0].score, 2.0f);
}

TEST(EmbeddingDimensions, OnlyTheModelWidth) {
  EXPECT_TRUE(check_embedding_dimensions(0, 384, "dimensions").is_ok());    // not given
  EXPECT_TRUE(check_embedding_dimensions(384, 384, "dimensions").is_ok());
  const Status half = check_embedding_dimensions(192, 384, "dimensions");
  ASSERT_FALSE(half.is_ok());
  EXPECT_NE(half.message().find("dimensions 192"), std::string::npos) << half.message();
  EXPECT_NE(half.message().find("384"), std::string::npos) << half.message();
  EXPECT_FALSE(check_embedding_dimensions(768, 384, "dimensions").is_ok());
}

}  // namespace
}  // namespace ox
