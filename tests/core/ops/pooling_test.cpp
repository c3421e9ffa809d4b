// Pooling and normalisation: values worked out by hand from llama.cpp's definitions
// (common_embd_normalize, common_embd_similarity_cos, build_pooling), not from our output.
#include "core/ops/pooling.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ox {
namespace {

TEST(Pooling, ParsesLlamaCppNames) {
  EXPECT_EQ(parse_pooling("mean", "--pooling").value(), Pooling::kMean);
  EXPECT_EQ(parse_pooling("rank", "--pooling").value(), Pooling::kRank);
  const Status bad = parse_pooling("avg", "--pooling").status();
  EXPECT_NE(bad.message().find("--pooling"), std::string::npos);
  EXPECT_NE(bad.message().find("avg"), std::string::npos);
  EXPECT_EQ(pooling_from_gguf(3, "k").value(), Pooling::kLast);
  EXPECT_FALSE(pooling_from_gguf(7, "k").ok());
}

TEST(Pooling, MeanClsLast) {
  const float rows[] = {1, 2, 3, 4, 5, 9};  // 3 tokens of 2
  float out[2];
  pool_rows(Pooling::kMean, rows, 3, 2, out);
  EXPECT_FLOAT_EQ(out[0], 3.0f);
  EXPECT_FLOAT_EQ(out[1], 5.0f);
  pool_rows(Pooling::kCls, rows, 3, 2, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 2.0f);
  pool_rows(Pooling::kLast, rows, 3, 2, out);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 9.0f);
}

TEST(Pooling, NormalisationsAsLlamaCpp) {
  const float v[] = {3, -4};
  float out[2];
  normalize_embedding(v, out, 2, kNormalizeEuclidean);
  EXPECT_FLOAT_EQ(out[0], 0.6f);
  EXPECT_FLOAT_EQ(out[1], -0.8f);
  normalize_embedding(v, out, 2, kNormalizeTaxicab);
  EXPECT_FLOAT_EQ(out[0], 3.0f / 7.0f);
  EXPECT_FLOAT_EQ(out[1], -4.0f / 7.0f);
  normalize_embedding(v, out, 2, kNormalizeMaxAbs);  // largest |x| -> 32760
  EXPECT_FLOAT_EQ(out[0], 24570.0f);
  EXPECT_FLOAT_EQ(out[1], -32760.0f);
  normalize_embedding(v, out, 2, kNormalizeNone);
  EXPECT_EQ(out[0], 3.0f);
  normalize_embedding(v, out, 2, 3);  // (27 + 64)^(1/3)
  EXPECT_NEAR(out[0], 3.0 / std::cbrt(91.0), 1e-6);
  const float zero[] = {0, 0};
  normalize_embedding(zero, out, 2, kNormalizeEuclidean);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_TRUE(check_normalize(5, "--embd-normalize").is_ok());
  EXPECT_FALSE(check_normalize(-2, "--embd-normalize").is_ok());
}

TEST(Pooling, CosineSimilarity) {
  const float a[] = {1, 0}, b[] = {1, 1}, z[] = {0, 0};
  EXPECT_NEAR(cosine_similarity(a, b, 2), 1.0 / std::sqrt(2.0), 1e-7);
  EXPECT_EQ(cosine_similarity(z, z, 2), 1.0f);
  EXPECT_EQ(cosine_similarity(a, z, 2), 0.0f);
}

}  // namespace
}  // namespace ox
