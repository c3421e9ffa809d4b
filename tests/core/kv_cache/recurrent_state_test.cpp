// The recurrent state in the cache: counted in the sizes, disjoint per (layer, sequence), copied
// only whole by seq_cp, cleared per sequence, and its bytes after the K/V rows in the saved ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/kv_cache/kv_cache.h"

namespace ox {
namespace {

KvCacheShape hybrid_shape() {
  KvCacheShape s;
  s.n_layer = 3;
  s.n_ctx = 8;
  s.k_dim = s.v_dim = 32;
  s.head_dim_k = s.head_dim_v = 32;
  s.type_k = s.type_v = DType::F32;
  s.n_seq = 2;
  s.rs_conv_dim = 6;
  s.rs_ssm_dim = 10;
  return s;
}

TEST(RecurrentState, CountedInTheCacheSizes) {
  const KvCacheShape s = hybrid_shape();
  const uint64_t rows = 3 * 2 * 8 * (32 * 4 + 32 * 4);
  const uint64_t state = 3 * 2 * (6 + 10) * 4;
  EXPECT_EQ(KvCache::bytes_needed(s).value(), rows + state);
  Result<KvCache> c = KvCache::create(s);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c.value().has_recurrent());
  EXPECT_EQ(c.value().bytes(), rows + state);
  EXPECT_EQ(c.value().rs().bytes(), state);
  // A transformer's cache has none.
  KvCacheShape plain = s;
  plain.rs_conv_dim = plain.rs_ssm_dim = 0;
  EXPECT_FALSE(KvCache::create(plain).value().has_recurrent());
}

TEST(RecurrentState, LayersAndSequencesAreDisjointAndCopiedWhole) {
  KvCache c = KvCache::create(hybrid_shape()).value();
  RecurrentState& rs = c.rs();
  for (int l = 0; l < 3; ++l) {
    for (int s = 0; s < 2; ++s) {
      std::fill(rs.conv(l, s), rs.conv(l, s) + 6, static_cast<float>(100 * l + 10 * s + 1));
      std::fill(rs.ssm(l, s), rs.ssm(l, s) + 10, static_cast<float>(100 * l + 10 * s + 2));
    }
  }
  for (int l = 0; l < 3; ++l) {
    for (int s = 0; s < 2; ++s) {
      EXPECT_TRUE(std::all_of(rs.conv(l, s), rs.conv(l, s) + 6, [&](float v) { return v == 100 * l + 10 * s + 1; }));
      EXPECT_TRUE(std::all_of(rs.ssm(l, s), rs.ssm(l, s) + 10, [&](float v) { return v == 100 * l + 10 * s + 2; }));
    }
  }
  c.set_n_pos(0, 5);
  // Only the whole of sequence 0 can be copied: its state covers all 5 positions.
  EXPECT_EQ(c.seq_cp(0, 1, 0, 3).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(rs.ssm(2, 1)[0], 212.0f);
  ASSERT_TRUE(c.seq_cp(0, 1, 0, 5).is_ok());
  EXPECT_EQ(c.n_pos(1), 5);
  for (int l = 0; l < 3; ++l) EXPECT_EQ(rs.ssm(l, 1)[9], static_cast<float>(100 * l + 2));
  rs.clear(1);
  for (int l = 0; l < 3; ++l) {
    EXPECT_TRUE(std::all_of(rs.conv(l, 1), rs.ssm(l, 1) + 10, [](float v) { return v == 0.0f; }));
    EXPECT_EQ(rs.conv(l, 0)[0], static_cast<float>(100 * l + 1));  // sequence 0 untouched
  }
}

TEST(RecurrentState, SavedAfterTheRows) {
  KvCache c = KvCache::create(hybrid_shape()).value();
  c.rs().ssm(1, 1)[3] = 7.0f;
  c.set_n_pos(1, 4);
  const auto ranges = c.ranges(4, 1);
  ASSERT_EQ(ranges.size(), 3u * 2 + 3);  // K and V per layer, then the state per layer
  EXPECT_EQ(ranges[0].size(), 4u * 32 * 4);
  EXPECT_EQ(ranges[6 + 1].size(), (6u + 10) * 4);
  float v;
  std::memcpy(&v, ranges[6 + 1].data() + (6 + 3) * 4, 4);
  EXPECT_EQ(v, 7.0f);
  // restore() from those bytes, back to back, restores it.
  std::vector<uint8_t> bytes;
  for (const auto& r : ranges) bytes.insert(bytes.end(), r.begin(), r.end());
  ASSERT_EQ(bytes.size(), c.saved_bytes(4, 0));
  c.restore(0, 4, 0, bytes.data());
  EXPECT_EQ(c.rs().ssm(1, 0)[3], 7.0f);
  EXPECT_EQ(c.n_pos(0), 4);
}

}  // namespace
}  // namespace ox
