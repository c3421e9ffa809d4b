// ThreadPool: a fixed set of workers shared by every op of a session. Decode of a small model
// runs hundreds of ops per token, so workers spin briefly on an atomic generation counter before
// sleeping: wake-up latency stays in the microseconds without burning a core while idle. Tasks
// are claimed from a shared counter, so run() never waits for a thread that is not running.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ox {

// A non-owning reference to a callable (no allocation, unlike std::function).
template <typename Fn>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  FunctionRef(F& f) : object_(&f), call_([](void* o, Args... a) -> R { return (*static_cast<F*>(o))(a...); }) {}  // NOLINT
  R operator()(Args... a) const { return call_(object_, a...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

class ThreadPool {
 public:
  // n_threads is the number of tasks every run() splits into. Runners (the calling thread and
  // n_runners - 1 workers) claim them; n_runners 0 means one per CPU this process may use, at most
  // n_threads (see runners_for in the .cpp): ThreadPool(8) on 2 CPUs runs 8 tasks on the caller
  // and one worker, with the same results as on 8 CPUs. ThreadPool(1) starts no worker (works
  // without pthreads). Tests pass n_runners to run more threads than there are CPUs.
  explicit ThreadPool(int n_threads, int n_runners = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }
  // Threads started besides the caller's: n_runners - 1.
  int n_workers() const { return static_cast<int>(workers_.size()); }

  // Runs fn(task, n_threads) once for every task in [0, n_threads) and returns when all have
  // finished. Tasks are claimed by whichever runner (the caller or a worker) is free first, so a
  // task index is not a thread identity: use it for per-task scratch and shares of the work, and
  // expect two tasks of one run to run one after the other on the same thread. Work splitting is
  // the caller's: see split_range().
  void run(FunctionRef<void(int, int)> fn);

 private:
  void worker_loop();
  // Waits (spins, then sleeps) until the generation in claim_ differs from `seen`; returns claim_.
  uint64_t wait_for_generation(uint64_t seen);

  int n_threads_;
  std::vector<std::thread> workers_;
  FunctionRef<void(int, int)>* job_ = nullptr;
  // generation << 32 | next unclaimed task. One word, so that run() publishes a new generation and
  // resets the task counter in one store (see run() for why a late claim is still safe).
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<int> done_{0};  // tasks that workers finished in this generation
  std::atomic<int> sleepers_{0};
  std::atomic<int> caller_cpu_{-1};  // the CPU run() last published from (-1: unknown)
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

// The [begin, end) share of `n` items for thread `index` of `count`, in contiguous chunks whose
// boundaries are multiples of `granule` (so threads never split a block or cache line).
inline void split_range(int64_t n, int index, int count, int64_t granule, int64_t* begin, int64_t* end) {
  const int64_t units = (n + granule - 1) / granule;
  const int64_t per = units / count, extra = units % count;
  const int64_t first = index * per + (index < extra ? index : extra);
  const int64_t last = first + per + (index < extra ? 1 : 0);
  *begin = first * granule < n ? first * granule : n;
  *end = last * granule < n ? last * granule : n;
}

}  // namespace ox
