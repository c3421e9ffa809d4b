// ThreadPool: a fixed set of workers shared by every op of a session. Decode of a small model
// runs hundreds of ops per token, so workers spin briefly on an atomic generation counter before
// sleeping: wake-up latency stays in the microseconds without burning a core while idle.
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
  // n_threads counts the calling thread: ThreadPool(1) starts no worker (works without pthreads).
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }

  // Runs fn(thread_index, n_threads) once on every thread (the caller is thread 0) and returns
  // when all have finished. Work splitting is the caller's: see split_range().
  void run(FunctionRef<void(int, int)> fn);

 private:
  void worker_loop(int index);

  int n_threads_;
  std::vector<std::thread> workers_;
  FunctionRef<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
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
