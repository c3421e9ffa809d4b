// ThreadPool implementation: spin-then-sleep workers released by a generation counter.
#include "core/base/thread_pool.h"

#include <chrono>

namespace ox {
namespace {
// How long an idle worker spins before sleeping, and how long run() spins waiting for workers
// before yielding. Measured in time, not iterations: a spin iteration is ~50x shorter in wasm
// (no pause instruction) than on x86, and in wasm a sleeping worker costs a futex round trip
// through the browser (tens of microseconds) at its next op. A decode step of a small model is
// hundreds of ops with short serial gaps between them; 300 us covers those gaps, and an idle
// pool still falls asleep within a third of a millisecond.
constexpr auto kSpinTime = std::chrono::microseconds(300);
constexpr int kSpinsPerClockRead = 2048;  // reading the clock costs a JS call in wasm

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or kSpinTime has passed; true if done() became true.
template <typename Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < kSpinsPerClockRead; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_seq_cst);
    generation_.fetch_add(1, std::memory_order_seq_cst);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run(FunctionRef<void(int, int)> fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_release);
  // No lock on the fast path. A worker going to sleep first counts itself in sleepers_, then
  // re-checks generation_ under the mutex (both seq_cst, as here): either it sees the new
  // generation, or this thread sees it in sleepers_, takes the mutex (so the worker is no longer
  // between its check and its wait) and wakes it. No wake-up is lost.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  fn(0, n_threads_);
  // Spin for the common case (workers finish within microseconds); yield after that so an
  // oversubscribed machine lets the late worker run instead of burning its time slice.
  auto done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(done)) {
    while (!done()) std::this_thread::yield();
  }
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = seen;
    auto published = [&] {
      now = generation_.load(std::memory_order_acquire);
      return now != seen;
    };
    if (!spin_until(published)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      now = generation_.load(std::memory_order_acquire);
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace ox
