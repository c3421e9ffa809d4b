// Job: one generation request of n choices (OpenAI's `n`), shared by the HTTP thread that waits on
// it and the batch loop that runs each choice in a slot of its own. The loop appends each choice's
// text and finishes it; the HTTP thread takes text as it comes and may cancel (client gone).
// Everything behind the mutex.
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
  int n_choices = 1;    // OpenAI's n: completions of the prompt, each in a slot, sampled independently
  int max_tokens = -1;  // -1: until end of generation (or the slot's context is full, without a shift)
  // Context shift (the server's --context-shift): n_keep as llama-server reads it (prompt tokens
  // after BOS; -1: the whole prompt), n_discard 0: half of what follows the kept tokens.
  int n_keep = 0;
  int n_discard = 0;
  // sampling.seed is choice 0's; choice i draws from seed + i (a fixed seed repeats every choice).
  SamplerParams sampling;
  DryBreakers dry_breakers;  // sampling.dry_sequence_breakers as token sequences (DRY on only)
  // Grammar / JSON schema / tool-call constraint: one per choice (a constraint has state), or empty.
  std::vector<std::shared_ptr<TokenConstraint>> constraints;
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

// One choice's part of an update: its new text, and whether it ended (then finish_reason is set;
// every later update says so again).
struct ChoiceUpdate {
  std::string text;
  std::vector<TokenLogprob> logprobs;  // tokens generated since the last take (logprobs requests)
  bool done = false;
  std::string finish_reason;  // "stop", "length", "abort"
};

// What the HTTP thread gets from take(): each choice's new text, and whether the job ended (every
// choice finished, or one failed: then error is set).
struct JobUpdate {
  std::vector<ChoiceUpdate> choices;  // [n_choices], by choice index
  bool done = false;
  std::string error;  // non-empty: the job failed (server shutting down, internal error, no token allowed)
  JobUsage usage;     // when done: the prompt's tokens once, the generated tokens of every choice
};

class Job {
 public:
  // params.n_choices >= 1; params.constraints empty or one per choice.
  Job(std::vector<int32_t> prompt, GenParams params);

  const std::vector<int32_t>& prompt() const { return prompt_; }
  const GenParams& params() const { return params_; }
  int n_choices() const { return params_.n_choices; }
  // Choice i's sampler settings (its seed) and constraint (null: none).
  SamplerParams sampling(int choice) const;
  TokenConstraint* constraint(int choice) const;

  // HTTP side. Waits until there is text or a choice or the job ended, or until `wait` passed
  // (then returns what there is, possibly nothing).
  JobUpdate take(std::chrono::milliseconds wait);
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  // Batch-loop side, per choice. A failed choice fails the job and cancels its other choices.
  void append(int choice, std::string_view text);
  void append_logprob(int choice, TokenLogprob entry);
  void finish(int choice, std::string reason, const JobUsage& usage);
  void fail(std::string message, const JobUsage& usage);
  bool done() const;

 private:
  struct Choice {
    std::string text;  // appended, not yet taken
    std::vector<TokenLogprob> logprobs;  // appended, not yet taken
    bool done = false;
    std::string finish_reason;
  };
  bool done_locked() const { return n_done_ == params_.n_choices || !error_.empty(); }

  const std::vector<int32_t> prompt_;
  const GenParams params_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Choice> choices_;
  int n_done_ = 0;
  bool changed_ = false;  // something to take since the last take()
  std::string error_;
  JobUsage usage_;
};

}  // namespace ox::server
