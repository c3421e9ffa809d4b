// ThreadPool implementation: tasks claimed from one atomic word by spin-then-sleep workers.
#include "core/base/thread_pool.h"

#include <algorithm>
#include <chrono>

#include "core/base/cpu_info.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sched.h>
#define OX_HAVE_GETCPU 1
#endif

namespace ox {
namespace {
// How long an idle worker spins before sleeping. Measured in time, not iterations: a spin
// iteration is ~50x shorter in wasm (no pause instruction) than on x86, and in wasm a sleeping
// worker costs a futex round trip through the browser (tens of microseconds) at its next op. A
// decode step of a small model is hundreds of ops with short serial gaps between them; 300 us
// covers those gaps, and an idle pool still falls asleep within a third of a millisecond.
constexpr auto kSpinTime = std::chrono::microseconds(300);
constexpr int kSpinsPerClockRead = 2048;  // reading the clock costs a JS call in wasm
// How often a spinning worker asks which CPU it is on (see wait_for_generation).
constexpr int kSpinsPerCpuCheck = 64;
// run() waits for tasks that workers started: ~1-20 us of pause spins (CPU dependent), then it
// yields at every check. On a CPU of its own a yield returns at once (no harm); on a CPU shared
// with the worker it waits for (another process took that worker's CPU, and the scheduler put the
// two on one), spinning would only keep that worker from finishing.
constexpr int kWaitSpinsBeforeYield = 1024;

constexpr int kGenerationShift = 32;
constexpr uint64_t kTaskMask = (uint64_t{1} << kGenerationShift) - 1;

inline uint64_t generation_of(uint64_t word) { return word >> kGenerationShift; }
// The task a claim got, or -1 if none was left (failed claims run the counter past n_tasks).
inline int task_of(uint64_t word, int n_tasks) {
  const uint64_t task = word & kTaskMask;
  return task < static_cast<uint64_t>(n_tasks) ? static_cast<int>(task) : -1;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The CPU this thread runs on, or -1 where that cannot be known (wasm).
inline int current_cpu() {
#if OX_HAVE_GETCPU
  return sched_getcpu();
#else
  return -1;
#endif
}

// Spins until done() or kSpinTime has passed; true if done() became true. Every
// kSpinsPerCpuCheck spins it yields instead of pausing if give_way() says so.
template <typename Done, typename GiveWay>
bool spin_until(Done done, GiveWay give_way) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < kSpinsPerClockRead; ++i) {
      if (done()) return true;
      if (i % kSpinsPerCpuCheck == kSpinsPerCpuCheck - 1 && give_way()) {
        std::this_thread::yield();
      } else {
        cpu_relax();
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

// Runners started for n tasks: one per CPU this process may use, at most one per task. A runner
// beyond the CPUs can only run by taking a time slice from one that is doing the work, and one
// descheduled in the middle of a task holds up the whole op until the scheduler returns to it
// (milliseconds); with tasks claimed from a counter the runners that exist do all the tasks anyway.
int runners_for(int n_tasks) { return std::min(n_tasks, available_cpu_count()); }
}  // namespace

ThreadPool::ThreadPool(int n_threads, int n_runners) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  claim_.store(static_cast<uint64_t>(n_threads_), std::memory_order_relaxed);  // generation 0: no task open
  if (n_runners <= 0) n_runners = runners_for(n_threads_);
  n_runners = std::min(n_runners, n_threads_);
  workers_.reserve(n_runners - 1);
  for (int i = 1; i < n_runners; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_seq_cst);
    // A new generation with no task left to claim: workers wake, see stop_ and return.
    const uint64_t next = generation_of(claim_.load(std::memory_order_relaxed)) + 1;
    claim_.store((next << kGenerationShift) | static_cast<uint64_t>(n_threads_), std::memory_order_seq_cst);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run(FunctionRef<void(int, int)> fn) {
  if (workers_.empty()) {  // one runner: the tasks in order on this thread, no atomics
    for (int task = 0; task < n_threads_; ++task) fn(task, n_threads_);
    return;
  }
  job_ = &fn;
  done_.store(0, std::memory_order_relaxed);
  // Publishing: the new generation with task 0 next, in one seq_cst (so also release) store after
  // job_ and done_ are written. A claim is a fetch_add on the same word, so it reads this store
  // or a later claim of the same run (a release sequence): whoever claims a task sees job_ and the
  // reset done_. A worker that was descheduled between seeing an older generation and claiming
  // claims from whatever generation is current: a task of this run (then job_ is this run's,
  // since the run cannot end before that task is done) or nothing. The previous run's counter is
  // at n_threads_ or past it by then (that run ended), so no late claim lands in a finished run;
  // a failed claim adds 1 past n_threads_, at most once per runner per generation: no carry into
  // the generation bits.
  caller_cpu_.store(current_cpu(), std::memory_order_relaxed);  // a hint for spinning workers
  const uint64_t generation = generation_of(claim_.load(std::memory_order_relaxed)) + 1;
  claim_.store(generation << kGenerationShift, std::memory_order_seq_cst);
  // No lock on the fast path. A worker going to sleep first counts itself in sleepers_, then
  // re-checks the generation under the mutex (both seq_cst, as here): either it sees the new
  // generation, or this thread sees it in sleepers_, takes the mutex (so the worker is no longer
  // between its check and its wait) and wakes it. No wake-up is lost.
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  // This thread claims tasks like any worker: if the workers are slow to wake or descheduled, it
  // runs their tasks itself instead of waiting for them to start.
  int ran_here = 0;
  for (;;) {
    const int task = task_of(claim_.fetch_add(1, std::memory_order_acquire), n_threads_);
    if (task < 0) break;
    fn(task, n_threads_);
    ++ran_here;
  }
  // Only tasks a worker already started are left: spin for the common case (they end within
  // microseconds), then yield (see kWaitSpinsBeforeYield).
  const int from_workers = n_threads_ - ran_here;
  for (int spins = 0; done_.load(std::memory_order_acquire) != from_workers; ++spins) {
    if (spins < kWaitSpinsBeforeYield) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
}

uint64_t ThreadPool::wait_for_generation(uint64_t seen) {
  uint64_t word = 0;
  auto published = [&] {
    word = claim_.load(std::memory_order_acquire);
    return generation_of(word) != seen;
  };
  // A worker that spins on the CPU the caller last published from is likely sharing it with the
  // caller (another process holds the other CPU, and the scheduler put both here): the caller can
  // publish nothing while this worker holds the CPU, so it yields. On a CPU of its own it pauses,
  // keeping its time slice against other processes.
  auto give_way = [&] {
    const int cpu = current_cpu();
    return cpu >= 0 && cpu == caller_cpu_.load(std::memory_order_relaxed);
  };
  if (spin_until(published, give_way)) return word;
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  wake_.wait(lock, [&] { return generation_of(claim_.load(std::memory_order_seq_cst)) != seen; });
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  return claim_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;  // the generation whose tasks this worker last found all claimed
  for (;;) {
    seen = generation_of(wait_for_generation(seen));
    if (stop_.load(std::memory_order_acquire)) return;
    for (;;) {
      const uint64_t word = claim_.fetch_add(1, std::memory_order_acquire);
      // The claim may land in a later generation than the one that woke this worker (see run()).
      seen = generation_of(word);
      const int task = task_of(word, n_threads_);
      if (task < 0) break;
      (*job_)(task, n_threads_);
      // Release: run() reads done_ with acquire before it returns, so the task's writes are
      // visible to the caller.
      done_.fetch_add(1, std::memory_order_release);
    }
    // The claim that found nothing may have read the destructor's generation: waiting for the
    // one after it would never end.
    if (stop_.load(std::memory_order_acquire)) return;
  }
}

}  // namespace ox
