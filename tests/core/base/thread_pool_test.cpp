// ThreadPool: every thread runs each job exactly once, results are visible after run(),
// and split_range covers [0, n) without overlap on granule boundaries.
#include "core/base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ox {
namespace {

TEST(ThreadPool, EveryThreadRunsEachJobOnce) {
  for (int n : {1, 2, 3, 4}) {
    ThreadPool pool(n);
    EXPECT_EQ(pool.n_threads(), n);
    for (int round = 0; round < 500; ++round) {
      std::vector<int> hits(n, 0);
      auto job = [&](int index, int count) {
        EXPECT_EQ(count, n);
        hits[index] += 1;
      };
      pool.run(job);
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "threads " << n << " round " << round;
    }
  }
}

// Workers spin ~300 us after a job, then sleep. Gaps around and past that time exercise the
// hand-over between a worker going to sleep and run() publishing the next job without a lock: a
// lost wake-up would leave run() waiting for ever (the test then fails by ctest's time-out).
TEST(ThreadPool, WorkersAreWokenAfterSleepingAndAroundTheSpinLimit) {
  ThreadPool pool(3);
  std::atomic<int> total{0};
  auto job = [&](int, int) { total.fetch_add(1); };
  int expected = 0;
  for (int round = 0; round < 120; ++round) {
    const int gap_us = round < 20 ? 2000 : (round * 37) % 700;  // asleep first, then 0..700 us
    std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
    pool.run(job);
    expected += 3;
    ASSERT_EQ(total.load(), expected) << "round " << round;
  }
}

TEST(ThreadPool, SumOverSplitRangesIsExact) {
  ThreadPool pool(3);
  const int64_t n = 100003;
  std::vector<int64_t> partial(3, 0);
  auto job = [&](int index, int count) {
    int64_t b, e;
    split_range(n, index, count, 16, &b, &e);
    for (int64_t i = b; i < e; ++i) partial[index] += i;
  };
  pool.run(job);
  EXPECT_EQ(partial[0] + partial[1] + partial[2], n * (n - 1) / 2);
}

TEST(SplitRange, CoversRangeOnGranuleBoundaries) {
  for (int64_t n : {0, 1, 15, 16, 17, 1000, 4099}) {
    for (int count : {1, 2, 3, 7}) {
      int64_t expected_begin = 0;
      for (int i = 0; i < count; ++i) {
        int64_t b, e;
        split_range(n, i, count, 16, &b, &e);
        EXPECT_EQ(b, expected_begin);
        EXPECT_LE(b, e);
        if (e < n) EXPECT_EQ(e % 16, 0);
        expected_begin = e;
      }
      EXPECT_EQ(expected_begin, n);
    }
  }
}

}  // namespace
}  // namespace ox
