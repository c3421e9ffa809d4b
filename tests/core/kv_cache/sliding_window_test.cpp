// KvCache's sliding-window layers: their size (window + batch + one attention tile per sequence, as
// against n_ctx with swa_full), the rows make_room keeps while positions stream past, and how
// drop_positions, seq_cp, can_resume and ranges/restore treat the positions a window layer holds.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/kv_cache/kv_cache.h"

namespace ox {
namespace {

constexpr int kSwaWindow = 16;
constexpr int kSwaBatch = 8;
constexpr int kSwaCtx = 512;
constexpr int64_t kWindowRows = kSwaWindow + kSwaBatch + kAttentionTile;  // 88

// 4 layers, 1 and 3 with the window (gemma-like: window layers then a global one); F32 rows of 8.
KvCacheShape window_shape(int n_seq, bool swa_full = false) {
  KvCacheShape s;
  s.n_layer = 4;
  s.n_ctx = kSwaCtx;
  s.k_dim = s.v_dim = s.head_dim_k = s.head_dim_v = 8;
  s.type_k = s.type_v = DType::F32;
  s.n_seq = n_seq;
  s.sliding = {true, false, true, false};
  s.window = kSwaWindow;
  s.n_batch = kSwaBatch;
  s.swa_full = swa_full;
  return s;
}

// Writes position p of every layer as a forward pass would: every float of its K row is p, of its V
// row -p.
void write_position(KvCache& c, int seq, int64_t p) {
  for (int l = 0; l < 4; ++l) {
    float* k = reinterpret_cast<float*>(c.k(l, seq, p));
    float* v = reinterpret_cast<float*>(c.v(l, seq, p));
    for (int i = 0; i < 8; ++i) k[i] = static_cast<float>(p), v[i] = -static_cast<float>(p);
  }
}

// Positions [0, n) of seq in batches of `batch`, as Model::forward.
void decode_positions(KvCache& c, int seq, int64_t n, int64_t batch) {
  for (int64_t p0 = c.n_pos(seq); p0 < n; p0 += batch) {
    const int64_t count = std::min(batch, n - p0);
    c.make_room(seq, p0, count);
    for (int64_t p = p0; p < p0 + count; ++p) write_position(c, seq, p);
    c.set_n_pos(seq, p0 + count);
  }
}

// Whether layer l of seq holds position p's rows (what write_position() put there).
bool holds_position(const KvCache& c, int l, int seq, int64_t p) {
  if (p < c.first_pos(l, seq) || p >= c.n_pos(seq)) return false;
  const float* k = reinterpret_cast<const float*>(c.k(l, seq, p));
  const float* v = reinterpret_cast<const float*>(c.v(l, seq, p));
  return k[0] == static_cast<float>(p) && k[7] == static_cast<float>(p) && v[3] == -static_cast<float>(p);
}

// Every layer holds what a full cache would let position n_pos(seq) see: the window before it.
void expect_window(const KvCache& c, int seq) {
  const int64_t n = c.n_pos(seq);
  for (int l = 0; l < 4; ++l) {
    const int64_t from = c.sliding(l) ? std::max<int64_t>(0, n - kSwaWindow + 1) : 0;
    for (int64_t p = from; p < n; ++p) ASSERT_TRUE(holds_position(c, l, seq, p)) << "layer " << l << " position " << p;
  }
}

TEST(KvCacheSlidingWindow, WindowLayersHoldWindowPlusBatchPlusATile) {
  // Per sequence: 2 full layers x 512 rows + 2 window layers x 88 rows, 64 bytes of K and of V each.
  const uint64_t row_bytes = 2 * 8 * sizeof(float);
  EXPECT_EQ(KvCache::bytes_needed(window_shape(1)).value(), (2 * kSwaCtx + 2 * kWindowRows) * row_bytes);
  EXPECT_EQ(KvCache::bytes_needed(window_shape(3)).value(), 3 * (2 * kSwaCtx + 2 * kWindowRows) * row_bytes);
  EXPECT_EQ(KvCache::bytes_needed(window_shape(1, /*swa_full=*/true)).value(), 4u * kSwaCtx * row_bytes);
  KvCache c = KvCache::create(window_shape(2)).value();
  EXPECT_EQ(c.bytes(), 2 * (2 * kSwaCtx + 2 * kWindowRows) * row_bytes);
  EXPECT_EQ(c.layer_rows(0), kWindowRows);
  EXPECT_EQ(c.layer_rows(1), kSwaCtx);
  // A context within the window rows keeps them all.
  KvCacheShape small = window_shape(1);
  small.n_ctx = 40;
  EXPECT_EQ(KvCache::bytes_needed(small).value(), 4u * 40 * row_bytes);
  // Flags for every layer, a window and a batch, or none.
  KvCacheShape bad = window_shape(1);
  bad.sliding.pop_back();
  EXPECT_EQ(KvCache::bytes_needed(bad).status().code(), ErrorCode::kInvalidArgument);
}

// Gemma 3 1B's cache (llama.cpp's hparams: 26 layers, one KV head of 256, window 512 on five layers
// of six, so 22 window layers and 4 global ones) at f16 with batches of 512: 1024 bytes per
// position and layer. llama.cpp's window cache has 1024 cells (window + ubatch, padded to 256);
// ours 1088 (one tile more), against n_ctx rows for every layer before (and with --swa-full).
TEST(KvCacheSlidingWindow, Gemma3OneBillionShape) {
  KvCacheShape s;
  s.n_layer = 26;
  s.k_dim = s.v_dim = s.head_dim_k = s.head_dim_v = 256;
  s.type_k = s.type_v = DType::F16;
  for (int l = 0; l < 26; ++l) s.sliding.push_back(l % 6 < 5);
  s.window = 512;
  s.n_batch = 512;
  for (int n_ctx : {4096, 32768}) {
    s.n_ctx = n_ctx;
    s.swa_full = false;
    const uint64_t window = KvCache::bytes_needed(s).value();
    s.swa_full = true;
    const uint64_t full = KvCache::bytes_needed(s).value();
    EXPECT_EQ(full, 26ull * n_ctx * 1024);
    EXPECT_EQ(window, (4ull * n_ctx + 22ull * 1088) * 1024);
    const uint64_t llama_cpp = (4ull * n_ctx + 22ull * 1024) * 1024;
    std::printf("gemma3 1B, n_ctx %d, f16: %llu bytes (%.1f MiB) with the window, %llu (%.1f MiB) --swa-full; "
                "llama.cpp %llu (%.1f MiB)\n",
                n_ctx, static_cast<unsigned long long>(window), window / 1048576.0,
                static_cast<unsigned long long>(full), full / 1048576.0, static_cast<unsigned long long>(llama_cpp),
                llama_cpp / 1048576.0);
  }
}

TEST(KvCacheSlidingWindow, MakeRoomKeepsTheWindowFromATileBoundary) {
  for (int64_t batch : {1, 3, kSwaBatch}) {
    KvCache c = KvCache::create(window_shape(1)).value();
    for (int64_t n = 0; n < kSwaCtx;) {
      n = std::min<int64_t>(kSwaCtx, n + 37);
      decode_positions(c, 0, n, batch);
      expect_window(c, 0);
      EXPECT_EQ(c.window_first(0) % kAttentionTile, 0) << "rows start at a tile boundary";
      EXPECT_TRUE(c.can_resume(0, n));
    }
    EXPECT_GT(c.window_first(0), 0) << "the window moved";
    // Cut back inside the window: still resumable; past it, not.
    EXPECT_TRUE(c.can_resume(0, c.window_first(0) + kSwaWindow - 1));
    EXPECT_FALSE(c.can_resume(0, c.window_first(0) + kSwaWindow - 2));
    c.set_n_pos(0, 100);  // below what the window holds: the window layers hold nothing now
    EXPECT_EQ(c.window_first(0), 100);
    EXPECT_FALSE(c.can_resume(0, 100));
    c.set_n_pos(0, 0);
    EXPECT_TRUE(c.can_resume(0, 0));
  }
}

TEST(KvCacheSlidingWindow, SwaFullNeverMoves) {
  KvCache c = KvCache::create(window_shape(1, /*swa_full=*/true)).value();
  decode_positions(c, 0, kSwaCtx, kSwaBatch);
  EXPECT_EQ(c.window_first(0), 0);
  for (int64_t p = 0; p < kSwaCtx; ++p) ASSERT_TRUE(holds_position(c, 0, 0, p));
}

TEST(KvCacheSlidingWindow, DropPositionsMovesWhatTheWindowHolds) {
  KvCache c = KvCache::create(window_shape(1)).value();
  decode_positions(c, 0, 300, kSwaBatch);
  const int64_t first = c.window_first(0);  // 256 + ...: the window holds [first, 300)
  ASSERT_GT(first, 100);
  // Dropped range below the window: the window's positions move down, rows stay.
  c.drop_positions(0, 10, 60);
  EXPECT_EQ(c.n_pos(0), 250);
  EXPECT_EQ(c.window_first(0), first - 50);
  for (int64_t p = c.window_first(0); p < 250; ++p) {
    const float* k = reinterpret_cast<const float*>(c.k(0, 0, p));
    ASSERT_EQ(k[0], static_cast<float>(p + 50)) << p;  // position p + 50's row, renumbered
    ASSERT_EQ(reinterpret_cast<const float*>(c.k(1, 0, p))[0], static_cast<float>(p + 50)) << p;
  }
  // A range across the window's start: the window then starts where the range was.
  const int64_t w = c.window_first(0);
  c.drop_positions(0, w - 5, w + 10);
  EXPECT_EQ(c.window_first(0), w - 5);
  EXPECT_EQ(reinterpret_cast<const float*>(c.k(0, 0, w - 5))[0], static_cast<float>(w + 10 + 50));
  EXPECT_EQ(reinterpret_cast<const float*>(c.k(1, 0, w - 5))[0], static_cast<float>(w + 10 + 50));
  // A range inside the window: both sides kept.
  const int64_t n = c.n_pos(0), w2 = c.window_first(0);
  c.drop_positions(0, w2 + 2, w2 + 4);
  EXPECT_EQ(c.n_pos(0), n - 2);
  EXPECT_EQ(c.window_first(0), w2);
  EXPECT_EQ(reinterpret_cast<const float*>(c.k(2, 0, w2 + 1))[0], static_cast<float>(w2 + 1 + 65));
  EXPECT_EQ(reinterpret_cast<const float*>(c.k(2, 0, w2 + 2))[0], static_cast<float>(w2 + 4 + 65));
}

TEST(KvCacheSlidingWindow, SeqCpCopiesTheWindow) {
  KvCache c = KvCache::create(window_shape(3)).value();
  decode_positions(c, 0, 300, kSwaBatch);
  // A whole prompt into an empty sequence: its window as the source holds it.
  ASSERT_TRUE(c.seq_cp(0, 1, 0, 300).is_ok());
  EXPECT_EQ(c.n_pos(1), 300);
  EXPECT_EQ(c.window_first(1), c.window_first(0));
  expect_window(c, 1);
  EXPECT_TRUE(c.can_resume(1, 300));
  decode_positions(c, 1, 420, 1);  // and it goes on
  expect_window(c, 1);
  // The rest of a prompt after a prefix of its own.
  decode_positions(c, 2, 5, kSwaBatch);
  ASSERT_TRUE(c.seq_cp(0, 2, 5, 300).is_ok());
  EXPECT_EQ(c.n_pos(2), 300);
  expect_window(c, 2);
  for (int64_t p = 0; p < 300; ++p) ASSERT_TRUE(holds_position(c, 1, 2, p)) << p;  // full layers: all of it
  // A short copy that the window rows hold whole keeps the destination's own start.
  KvCache d = KvCache::create(window_shape(2)).value();
  decode_positions(d, 0, 40, kSwaBatch);
  decode_positions(d, 1, 20, kSwaBatch);
  ASSERT_TRUE(d.seq_cp(0, 1, 20, 40).is_ok());
  EXPECT_EQ(d.window_first(1), 0);
  for (int64_t p = 0; p < 40; ++p) ASSERT_TRUE(holds_position(d, 0, 1, p)) << p;
}

TEST(KvCacheSlidingWindow, SavedRangesRestoreIntoAnySize) {
  KvCache c = KvCache::create(window_shape(1)).value();
  decode_positions(c, 0, 300, kSwaBatch);
  const int64_t first = c.saved_first(300);
  EXPECT_EQ(first, c.window_first(0));
  std::vector<uint8_t> bytes;
  for (std::span<const uint8_t> r : c.ranges(300)) bytes.insert(bytes.end(), r.begin(), r.end());
  ASSERT_EQ(bytes.size(), c.saved_bytes(300, first));
  EXPECT_LT(bytes.size(), 4u * 300 * 64) << "window layers save their window only";
  for (bool swa_full : {false, true}) {
    KvCache d = KvCache::create(window_shape(1, swa_full)).value();
    d.restore(0, 300, first, bytes.data());
    EXPECT_EQ(d.n_pos(0), 300);
    EXPECT_EQ(d.window_first(0), first);
    expect_window(d, 0);
    decode_positions(d, 0, 400, 1);
    expect_window(d, 0);
  }
  // A state of a full window (swa_full) into window rows: the last rows.
  KvCache full = KvCache::create(window_shape(1, true)).value();
  decode_positions(full, 0, 300, kSwaBatch);
  bytes.clear();
  for (std::span<const uint8_t> r : full.ranges(300)) bytes.insert(bytes.end(), r.begin(), r.end());
  ASSERT_EQ(full.saved_first(300), 0);
  KvCache d = KvCache::create(window_shape(1)).value();
  d.restore(0, 300, 0, bytes.data());
  EXPECT_EQ(d.window_first(0), 300 - kWindowRows);
  expect_window(d, 0);
  EXPECT_TRUE(d.can_resume(0, 300));
}

}  // namespace
}  // namespace ox
