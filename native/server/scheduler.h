// Scheduler: continuous batching over one KV cache of n_slots sequences. One thread runs the loop:
// each step admits waiting jobs into free slots (the slot whose cached tokens share the longest
// prefix with the prompt, so a follow-up chat turn evaluates only its new tokens), then submits ONE
// Model::forward_batch holding every generating slot's next token plus chunks of joining prompts,
// samples each slot's row and hands text to its Job. A cancelled job frees its slots at the next step.
// A job of n choices takes n slots at once: choice 0's slot evaluates the prompt, the others wait,
// then get its cache rows (KvCache::seq_cp) and its last logits, and go on as generations of their own.
// A slot whose context fills shifts it (--context-shift) or ends with "length".
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/session/session.h"
#include "core/tokenizer/stream_decoder.h"
#include "native/server/job.h"
#include "native/server/metrics.h"

namespace ox::server {

struct SchedulerOptions {
  int n_slots = 1;
  int n_ctx_slot = 0;  // positions per slot
  int n_batch = 512;   // tokens per forward pass
  int n_threads = 1;
  int max_queue = 64;
  DType cache_type_k = DType::F16;
  DType cache_type_v = DType::F16;
  bool swa_full = false;       // sliding-window layers keep the whole context (llama.cpp's --swa-full)
  bool context_shift = false;  // llama-server's --context-shift (off by default in v0.5.0)
};

enum class Admission { kQueued, kQueueFull, kShuttingDown };

class Scheduler {
 public:
  static Result<std::unique_ptr<Scheduler>> create(std::shared_ptr<const LoadedModel> model,
                                                   const SchedulerOptions& options, Metrics* metrics);
  ~Scheduler();

  int n_ctx_slot() const { return options_.n_ctx_slot; }
  int n_slots() const { return options_.n_slots; }
  bool context_shift() const { return options_.context_shift; }

  // Queues a job for the next free slots, one per choice (HTTP threads). Its n_choices must not
  // exceed n_slots (the route refuses such a request).
  Admission submit(std::shared_ptr<Job> job);
  // The batch loop; returns after shutdown().
  void run();
  // Fails every queued and running job ("the server is shutting down") and ends run().
  void shutdown();

 private:
  struct Active;  // a running generation: sampler, detokenizer, stop matcher
  struct Slot {
    std::vector<int32_t> cached;  // tokens the slot's sequence holds in the KV cache, in order
    std::unique_ptr<Active> active;
    uint64_t last_used = 0;  // admission counter when a job last took the slot
  };
  Scheduler(std::shared_ptr<const LoadedModel> model, const SchedulerOptions& options, Metrics* metrics);

  void admit_waiting();
  void admit(const std::shared_ptr<Job>& job, const std::vector<int>& slots);
  std::vector<int> pick_slots(const Job& job) const;
  size_t reusable_prefix(const Slot& slot, const std::vector<int32_t>& prompt, bool need_logits) const;
  Status step();
  void start_choices(int parent, std::span<const float> logits);
  void sample_slot(int slot, std::span<const float> logits);
  bool shift_slot(int slot);
  void finish_slot(int slot, const char* reason, bool flush);
  void fail_slot(int slot, const std::string& message);
  void fail_all(const std::string& message);

  std::shared_ptr<const LoadedModel> model_;
  SchedulerOptions options_;
  Metrics* metrics_;
  ThreadPool pool_;
  std::unique_ptr<ForwardState> state_;
  std::vector<Slot> slots_;
  std::vector<BatchToken> batch_;
  std::vector<int> batch_logit_slot_;  // for each logits row of the batch: its slot
  std::vector<float> logits_;          // [n_slots][n_vocab]
  uint64_t use_counter_ = 0;
  int prefill_start_ = 0;              // the slot after which the next prompt step looks first
  int prompt_tokens_since_decode_ = 0;  // prompt steps run back to back up to n_batch tokens

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
};

}  // namespace ox::server
