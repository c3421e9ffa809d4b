// KvCache with several sequences: sizes, disjoint rows per (layer, sequence), seq_cp and per-sequence
// moves touching only their own sequence, and the positions each sequence holds.
#include "core/kv_cache/kv_cache.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ox {
namespace {

KvCacheShape shape(int n_seq) {
  KvCacheShape s;
  s.n_layer = 2;
  s.n_ctx = 8;
  s.k_dim = 64;  // 2 heads of 32
  s.v_dim = 64;
  s.head_dim_k = 32;
  s.head_dim_v = 32;
  s.type_k = DType::F16;  // 128 bytes a row
  s.type_v = DType::F32;  // 256 bytes a row
  s.n_seq = n_seq;
  return s;
}

// Marks every byte of a row with (layer, seq, pos) so that any overlap or misplaced copy shows.
uint8_t mark(int layer, int seq, int64_t pos, bool key) {
  return static_cast<uint8_t>(1 + layer * 64 + seq * 16 + pos * 2 + (key ? 1 : 0));
}

void fill(KvCache& c) {
  for (int l = 0; l < 2; ++l) {
    for (int s = 0; s < c.n_seq(); ++s) {
      for (int64_t p = 0; p < 8; ++p) {
        std::memset(c.k(l, s, p), mark(l, s, p, true), c.k_row_bytes());
        std::memset(c.v(l, s, p), mark(l, s, p, false), c.v_row_bytes());
      }
    }
  }
}

bool row_is(const uint8_t* row, uint64_t bytes, uint8_t value) {
  for (uint64_t i = 0; i < bytes; ++i) {
    if (row[i] != value) return false;
  }
  return true;
}

TEST(KvCacheSequences, SizeGrowsWithSequences) {
  // 2 layers x n_seq x 8 positions x (128 + 256) bytes.
  EXPECT_EQ(KvCache::bytes_needed(shape(1)).value(), 6144u);
  EXPECT_EQ(KvCache::bytes_needed(shape(3)).value(), 18432u);
  EXPECT_EQ(KvCache::bytes_needed(shape(0)).status().code(), ErrorCode::kInvalidArgument);
  Result<KvCache> c = KvCache::create(shape(3));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bytes(), 18432u);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(c->n_pos(s), 0);
}

TEST(KvCacheSequences, RowsOfEveryLayerSequenceAndPositionAreDisjoint) {
  Result<KvCache> c = KvCache::create(shape(3));
  ASSERT_TRUE(c.ok());
  fill(*c);
  for (int l = 0; l < 2; ++l) {
    for (int s = 0; s < 3; ++s) {
      for (int64_t p = 0; p < 8; ++p) {
        EXPECT_TRUE(row_is(c->k(l, s, p), c->k_row_bytes(), mark(l, s, p, true))) << l << " " << s << " " << p;
        EXPECT_TRUE(row_is(c->v(l, s, p), c->v_row_bytes(), mark(l, s, p, false))) << l << " " << s << " " << p;
      }
    }
  }
  // A sequence's rows of one layer are adjacent (attention reads them with one stride).
  EXPECT_EQ(c->k(1, 2, 5), c->k(1, 2, 0) + 5 * c->k_row_bytes());
}

TEST(KvCacheSequences, SeqCpCopiesOnlyTheRangeIntoTheOtherSequence) {
  Result<KvCache> c = KvCache::create(shape(3));
  ASSERT_TRUE(c.ok());
  fill(*c);
  c->set_n_pos(0, 6);
  c->set_n_pos(2, 7);
  ASSERT_TRUE(c->seq_cp(0, 1, 0, 5).is_ok());
  EXPECT_EQ(c->n_pos(1), 5);
  for (int l = 0; l < 2; ++l) {
    for (int64_t p = 0; p < 8; ++p) {
      const int from = p < 5 ? 0 : 1;  // copied rows come from sequence 0, the rest is sequence 1's
      EXPECT_TRUE(row_is(c->k(l, 1, p), c->k_row_bytes(), mark(l, from, p, true))) << l << " " << p;
      EXPECT_TRUE(row_is(c->v(l, 1, p), c->v_row_bytes(), mark(l, from, p, false))) << l << " " << p;
      EXPECT_TRUE(row_is(c->k(l, 2, p), c->k_row_bytes(), mark(l, 2, p, true))) << "sequence 2 untouched";
    }
  }
  // Into the middle of a sequence that holds the positions before it; it then ends at p1.
  ASSERT_TRUE(c->seq_cp(0, 2, 3, 5).is_ok());
  EXPECT_EQ(c->n_pos(2), 5);
  EXPECT_TRUE(row_is(c->k(1, 2, 2), c->k_row_bytes(), mark(1, 2, 2, true)));
  EXPECT_TRUE(row_is(c->k(1, 2, 3), c->k_row_bytes(), mark(1, 0, 3, true)));

  EXPECT_EQ(c->seq_cp(1, 1, 0, 2).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c->seq_cp(0, 3, 0, 2).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c->seq_cp(-1, 1, 0, 2).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c->seq_cp(0, 1, 0, 7).code(), ErrorCode::kOutOfRange);  // sequence 0 holds 6
  EXPECT_EQ(c->seq_cp(0, 1, 4, 4).code(), ErrorCode::kOutOfRange);  // empty range
  c->set_n_pos(1, 2);
  const Status gap = c->seq_cp(0, 1, 3, 5);  // sequence 1 holds [0, 2): position 2 would be missing
  EXPECT_EQ(gap.code(), ErrorCode::kOutOfRange);
  EXPECT_NE(gap.message().find("missing"), std::string::npos) << gap.message();
  EXPECT_EQ(c->n_pos(1), 2);
}

TEST(KvCacheSequences, DropPositionsStaysInItsSequence) {
  Result<KvCache> c = KvCache::create(shape(2));
  ASSERT_TRUE(c.ok());
  fill(*c);
  c->set_n_pos(1, 8);
  c->drop_positions(1, 2, 5);  // sequence 1: positions 5, 6, 7 -> 2, 3, 4
  EXPECT_EQ(c->n_pos(1), 5);
  for (int l = 0; l < 2; ++l) {
    for (int64_t p = 0; p < 8; ++p) {
      const int64_t src = p >= 2 && p < 5 ? p + 3 : p;  // (rows from 5 on are stale: they keep theirs)
      EXPECT_TRUE(row_is(c->k(l, 1, p), c->k_row_bytes(), mark(l, 1, src, true))) << l << " " << p;
      EXPECT_TRUE(row_is(c->v(l, 1, p), c->v_row_bytes(), mark(l, 1, src, false))) << l << " " << p;
      EXPECT_TRUE(row_is(c->k(l, 0, p), c->k_row_bytes(), mark(l, 0, p, true))) << "sequence 0 untouched";
    }
  }
}

TEST(KvCacheSequences, RangesCoverOneSequence) {
  Result<KvCache> c = KvCache::create(shape(2));
  ASSERT_TRUE(c.ok());
  fill(*c);
  c->set_n_pos(1, 3);
  const auto r = c->ranges(3, 1);
  ASSERT_EQ(r.size(), 4u);  // K, V of 2 layers
  EXPECT_EQ(r[2].data(), c->k(1, 1, 0));
  EXPECT_EQ(r[2].size(), 3 * c->k_row_bytes());
  EXPECT_EQ(r[3].size(), 3 * c->v_row_bytes());
  std::vector<uint8_t> bytes(c->saved_bytes(5, 0), 0);
  c->restore(1, 5, 0, bytes.data());
  EXPECT_EQ(c->n_pos(1), 5) << "filling positions [0, 5) makes the sequence hold them";
  EXPECT_EQ(c->n_pos(0), 0);
}

}  // namespace
}  // namespace ox
