// T5's relative position buckets against values worked out by hand from the definition in Hugging
// Face's T5Attention._relative_position_bucket (max_distance 128): exact buckets for small offsets,
// then max_exact + floor(log(d / max_exact) / log(128 / max_exact) * (buckets - max_exact)), capped;
// keys after the query take the upper half when bidirectional. And the per-offset table.
#include <gtest/gtest.h>

#include <vector>

#include "core/ops/relative_bias.h"

namespace ox {
namespace {

TEST(RelativeBias, BidirectionalBucketsOf32) {
  // 16 buckets per direction, 8 exact: d = 12 -> 8 + floor(8 log(1.5) / log(16)) = 8 + floor(1.17).
  const int64_t distance[] = {0, 1, 7, 8, 9, 12, 20, 50, 127, 128, 1000};
  const int32_t bucket[] = {0, 1, 7, 8, 8, 9, 10, 13, 15, 15, 15};
  for (size_t i = 0; i < std::size(distance); ++i) {
    EXPECT_EQ(relative_position_bucket(-distance[i], 32, true), bucket[i]) << "key " << distance[i] << " before";
    if (distance[i] > 0) {
      EXPECT_EQ(relative_position_bucket(distance[i], 32, true), 16 + bucket[i]) << "key " << distance[i] << " after";
    }
  }
}

TEST(RelativeBias, UnidirectionalBucketsOf32) {
  // A decoder's: keys after the query share bucket 0; 16 exact, then 16 + floor(16 log(d / 16) / log(8)).
  EXPECT_EQ(relative_position_bucket(5, 32, false), 0);
  EXPECT_EQ(relative_position_bucket(-5, 32, false), 5);
  EXPECT_EQ(relative_position_bucket(-15, 32, false), 15);
  EXPECT_EQ(relative_position_bucket(-20, 32, false), 17);  // 16 + floor(1.72)
  EXPECT_EQ(relative_position_bucket(-64, 32, false), 26);  // 16 + floor(10.67)
  EXPECT_EQ(relative_position_bucket(-500, 32, false), 31);
}

TEST(RelativeBias, TableHoldsEachOffsetsBucketRow) {
  const int n_head = 2, n_buckets = 8;
  std::vector<float> rel_b(n_head * n_buckets);
  for (size_t i = 0; i < rel_b.size(); ++i) rel_b[i] = static_cast<float>(i);  // bucket b, head h: 2b + h
  const int64_t n = 5;
  std::vector<float> table((2 * n - 1) * n_head, -1.0f);
  relative_bias_table(rel_b.data(), n_head, n_buckets, true, n, table.data());
  const float* zero = table.data() + (n - 1) * n_head;
  for (int64_t offset = 1 - n; offset < n; ++offset) {
    const int32_t b = relative_position_bucket(offset, n_buckets, true);
    for (int h = 0; h < n_head; ++h) EXPECT_EQ(zero[offset * n_head + h], 2 * b + h) << offset;
  }
  // 8 buckets: 4 per direction, 2 exact; offset -3 -> 2 + floor(2 log(1.5) / log(64)) = 2, +4 -> 4 + 2.
  EXPECT_EQ(relative_position_bucket(-3, 8, true), 2);
  EXPECT_EQ(relative_position_bucket(4, 8, true), 6);
}

}  // namespace
}  // namespace ox
