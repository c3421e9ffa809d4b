// Generation: Session::generate's loop cut into resumable steps. The browser worker runs a few
// milliseconds of it at a time and returns to the JS event loop in between, so abort messages and
// streaming work without SharedArrayBuffer (the single-thread build has none).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sampler/sampler.h"
#include "core/session/session.h"
#include "core/session/text_stream.h"

namespace ox::web {

struct StepEvent {
  int32_t token;     // -1 for text flushed at the end (held-back UTF-8 or stop-string prefix)
  std::string text;  // may be empty while a character or possible stop string is pending
};

class Generation {
 public:
  // The session must outlive the generation; nothing runs until begin().
  Generation(Session& session, std::vector<int32_t> prompt, GenerateOptions options, int n_batch);

  // Validates the prompt and drops the part of the KV cache that differs from it.
  Status begin();
  // Evaluates prompt batches and samples tokens until `max_events` tokens came out, `budget_ms`
  // passed or the generation ended; appends what it produced to `events`.
  Status step(int max_events, double budget_ms, std::vector<StepEvent>* events);
  // Ends a running generation with finish_reason "abort" and flushes held-back text into `events`.
  void abort(std::vector<StepEvent>* events);

  bool done() const { return done_; }
  const GenerateStats& stats() const { return stats_; }

 private:
  void finish(const char* reason, std::vector<StepEvent>* events, bool flush);

  Session& session_;
  std::vector<int32_t> prompt_;
  GenerateOptions options_;
  int n_batch_;
  Sampler sampler_;
  TextStream stream_;
  GenerateStats stats_;
  size_t prompt_pos_ = 0;  // prompt tokens [0, prompt_pos_) are in the KV cache
  int32_t pending_ = -1;   // sampled but not yet evaluated
  bool begun_ = false;
  bool done_ = false;
};

}  // namespace ox::web
