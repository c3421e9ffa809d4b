// Job: one generation request, shared by the HTTP thread that waits on it and the batch loop that
// runs it. The loop appends text and finishes it; the HTTP thread takes text as it comes and may
// cancel (client gone). Everything behind the mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/sampler/sampler.h"

namespace ox::server {

struct GenParams {
  int max_tokens = -1;  // -1: until end of generation or the slot's context is full
  SamplerParams sampling;
  DryBreakers dry_breakers;  // sampling.dry_sequence_breakers as token sequences (DRY on only)
  std::shared_ptr<TokenConstraint> constraint;  // grammar / JSON schema of this request, or null
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool render_special = false;  // control tokens' texts in the output (tool-call markers to parse)
  int top_logprobs = -1;  // >= 0: each token's log probability and this many alternatives (logprobs)
};

// One generated token's log probabilities (requests with logprobs), from the softmax of the raw
// logits as llama-server's n_probs without post_sampling_probs.
struct TokenLogprob {
  std::string piece;  // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // the most likely tokens' bytes and log probabilities
};

struct JobUsage {
  int n_prompt = 0;     // prompt tokens of the request
  int n_cached = 0;     // of those, found in the slot's cache (not evaluated again)
  int n_generated = 0;
  double prompt_ms = 0;
  double generate_ms = 0;
};

// What the HTTP thread gets from take(): new text, and whether the job ended (then finish_reason or
// error is set).
struct JobUpdate {
  std::string text;
  std::vector<TokenLogprob> logprobs;  // tokens generated since the last take (logprobs requests)
  bool done = false;
  std::string finish_reason;  // "stop", "length", "abort"
  std::string error;          // non-empty: the job failed (server shutting down, internal error)
  JobUsage usage;
};

class Job {
 public:
  Job(std::vector<int32_t> prompt, GenParams params) : prompt_(std::move(prompt)), params_(std::move(params)) {}

  const std::vector<int32_t>& prompt() const { return prompt_; }
  const GenParams& params() const { return params_; }

  // HTTP side. Waits until there is text or the job ended, or until `wait` passed (then returns
  // what there is, possibly nothing).
  JobUpdate take(std::chrono::milliseconds wait);
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  // Batch-loop side.
  void append(std::string_view text);
  void append_logprob(TokenLogprob entry);
  void finish(std::string reason, const JobUsage& usage);
  void fail(std::string message, const JobUsage& usage);
  bool done() const;

 private:
  void end(std::string reason, std::string error, const JobUsage& usage);

  const std::vector<int32_t> prompt_;
  const GenParams params_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string text_;  // appended, not yet taken
  std::vector<TokenLogprob> logprobs_;  // appended, not yet taken
  bool done_ = false;
  std::string finish_reason_;
  std::string error_;
  JobUsage usage_;
};

}  // namespace ox::server
