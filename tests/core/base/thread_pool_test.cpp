// ThreadPool: every task index runs exactly once per run() whatever the thread count and however
// many CPUs there are, results are visible after run(), and split_range covers [0, n) without
// overlap on granule boundaries. Also the CPU counts the pool and the default -t come from.
#include "core/base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/base/cpu_info.h"


namespace ox {
namespace {

// Per-task counters of one run; atomic, so that a task run twice at once is counted twice.
struct Hits {
  explicit Hits(int n) : count(new std::atomic<int>[n]), n(n) { clear(); }
  void clear() {
    for (int i = 0; i < n; ++i) count[i].store(0);
  }
  std::unique_ptr<std::atomic<int>[]> count;
  int n;
};

// Runners 0: one per CPU (the default); 1: the caller runs every task; n: one thread per task,
// more threads than CPUs on most machines, so several workers race for each claim.
TEST(ThreadPool, EveryTaskRunsOncePerRun) {
  for (int n : {1, 2, 3, 4, 8, 16}) {
    for (int runners : {0, 1, n}) {
      ThreadPool pool(n, runners);
      EXPECT_EQ(pool.n_threads(), n);
      EXPECT_EQ(pool.n_workers(), (runners == 0 ? std::min(n, available_cpu_count()) : runners) - 1);
      Hits hits(n);
      std::atomic<int> bad_count{0};
      for (int round = 0; round < 2000; ++round) {
        hits.clear();
        auto job = [&](int task, int count) {
          if (count != n || task < 0 || task >= n) {
            bad_count.fetch_add(1);
            return;
          }
          hits.count[task].fetch_add(1);
          // About a microsecond of work: long enough that workers claim tasks too (an empty job
          // is over before a worker notices the run), short enough for thousands of runs.
          volatile int sink = 0;
          for (int i = 0; i < 3000; ++i) sink = sink + i;
        };
        pool.run(job);
        ASSERT_EQ(bad_count.load(), 0) << "threads " << n;
        // A skipped task reads 0 here, a task run twice 2, and a task still running when run()
        // returned is missed or lands in the next round's counts.
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(hits.count[i].load(), 1)
              << "threads " << n << " runners " << runners << " round " << round << " task " << i;
        }
      }
    }
  }
}

// Tasks of uneven length (some yield or sleep): runners fall behind and claim late, the case where
// a pool that hands a task out by thread, or lets a late claim reach a later run, would go wrong.
// Plain writes checked after run(): run() must also make the tasks' writes visible.
TEST(ThreadPool, UnevenTasksRunOnceAndTheirWritesAreVisible) {
  for (int n : {2, 3, 8, 16}) {
    ThreadPool pool(n, /*n_runners=*/n);
    std::vector<int> stamp(n, -1);
    for (int round = 0; round < 400; ++round) {
      auto job = [&](int task, int) {
        if ((task + round) % 5 == 0) std::this_thread::yield();
        if ((task * 7 + round) % 31 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        stamp[task] = round;  // each task owns its slot, as per-task scratch does
      };
      pool.run(job);
      for (int i = 0; i < n; ++i) ASSERT_EQ(stamp[i], round) << "threads " << n << " task " << i;
    }
  }
}

// More tasks than CPUs, with real work: must finish, and each task's share exactly once, with one
// runner per CPU (the default) and with one thread per task.
TEST(ThreadPool, MoreThreadsThanCpusComplete) {
  const int n = 4 * available_cpu_count() + 1;
  for (int runners : {0, n}) {
    ThreadPool pool(n, runners);
    EXPECT_EQ(pool.n_workers() + 1, runners == 0 ? available_cpu_count() : n);
    const int64_t items = 1 << 16;
    std::vector<int64_t> sums(n, 0);
    for (int round = 0; round < 50; ++round) {
      auto job = [&](int task, int count) {
        int64_t b, e, s = 0;
        split_range(items, task, count, 16, &b, &e);
        for (int64_t i = b; i < e; ++i) s += i;
        sums[task] = s;
      };
      pool.run(job);
      int64_t total = 0;
      for (int64_t s : sums) total += s;
      ASSERT_EQ(total, items * (items - 1) / 2) << "runners " << runners << " round " << round;
    }
  }
}

// Workers spin ~300 us after a job, then sleep. Gaps around and past that time exercise the
// hand-over between a worker going to sleep and run() publishing the next job without a lock: a
// lost wake-up would leave a claimed task unfinished and run() waiting for ever (the test then
// fails by ctest's time-out).
TEST(ThreadPool, WorkersAreWokenAfterSleepingAndAroundTheSpinLimit) {
  ThreadPool pool(3, /*n_runners=*/3);
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

// A pool destroyed right after a run, while workers may still be making their last (empty) claim or
// going to sleep: the destructor must not hang or lose a worker.
TEST(ThreadPool, DestroyedRightAfterRunning) {
  for (int i = 0; i < 200; ++i) {
    ThreadPool pool(2 + i % 4, /*n_runners=*/2 + i % 4);
    std::atomic<int> total{0};
    auto job = [&](int, int) { total.fetch_add(1); };
    pool.run(job);
    ASSERT_EQ(total.load(), 2 + i % 4);
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
        if (e < n) {
          EXPECT_EQ(e % 16, 0);
        }
        expected_begin = e;
      }
      EXPECT_EQ(expected_begin, n);
    }
  }
}

}  // namespace
}  // namespace ox
