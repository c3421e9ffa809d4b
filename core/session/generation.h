// Generation: the generation loop cut into resumable steps. Session::generate runs it to the end;
// the browser worker runs a few milliseconds at a time and returns to the JS event loop in
// between, so abort messages and streaming work without SharedArrayBuffer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/constraint.h"
#include "core/sampler/sampler.h"
#include "core/tokenizer/stream_decoder.h"

namespace ox {

class Session;

struct GenerateOptions {
  int max_tokens = -1;            // -1: until end of generation or the context is full
  SamplerParams sampling;         // checked by begin() (validate()); logit-bias ids against the vocabulary
  // A grammar: each token is sampled as llama.cpp does with one (see Sampler) and accepted into
  // it; begin() resets it. End-of-generation tokens are not passed to accept().
  std::shared_ptr<TokenConstraint> constraint;
  std::vector<std::string> stop;  // stop strings, matched across token boundaries
  bool ignore_eos = false;        // as llama.cpp: every end-of-generation token gets a -inf logit bias
  // When the context fills: keep its first n_keep tokens, drop half of the rest, go on
  // (llama.cpp's --keep / --context-shift); false: stop with "length". A prompt longer than the
  // context is cut the same way (the first n_keep tokens and the newest ones) instead of refused.
  bool context_shift = true;
  int n_keep = 0;
  bool render_special = false;    // print control tokens' text
  const std::atomic<bool>* abort = nullptr;  // set from another thread to stop early
};

// --keep N / n_keep as llama.cpp reads it: N prompt tokens after BOS (a BOS is always kept); -1 or
// more than the prompt: all of it. Returns GenerateOptions::n_keep, the leading tokens a shift keeps.
int resolve_n_keep(int keep, std::span<const int32_t> prompt, int32_t bos_id);

// One step of a generation: the token and the text that became complete with it (may be empty
// while a UTF-8 character or a possible stop string is pending).
struct GenerateEvent {
  int32_t token;
  std::string_view text;
  const TokenProbs* probs = nullptr;  // with sampling.n_probs > 0: the token's and the top probabilities
};

struct GenerateStats {
  int n_prompt = 0;        // prompt tokens evaluated (after reusing the cached prefix)
  int n_prompt_cached = 0; // prompt tokens found already in the KV cache
  int n_generated = 0;
  int n_context_shifts = 0;  // times the context was shifted during generation
  int n_shifted_out = 0;     // tokens those shifts dropped (all at position n_keep)
  int n_prompt_dropped = 0;  // prompt tokens left out because the prompt was longer than the context
  double prompt_ms = 0;
  double generate_ms = 0;  // time of the generated tokens' forward passes and sampling
  std::string finish_reason;  // "stop" (EOG or stop string), "length", "abort"
  std::vector<int32_t> tokens;  // generated ids
  std::string text;             // generated text (stop string excluded)
};

struct StepEvent {
  int32_t token;     // -1 for text flushed at the end (held-back UTF-8 or stop-string prefix)
  std::string text;  // may be empty while a character or possible stop string is pending
  TokenProbs probs;  // with sampling.n_probs > 0 (token -1 otherwise)
};

class Generation {
 public:
  // The session must outlive the generation; nothing runs until begin().
  // n_batch <= 0: the session's batch size.
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
  tok::StreamDecoder decoder_;  // token ids -> text, whole UTF-8 characters only
  tok::StopMatcher stop_;       // stop strings across pieces
  GenerateStats stats_;
  size_t prompt_pos_ = 0;  // prompt tokens [0, prompt_pos_) are in the KV cache
  int32_t pending_ = -1;   // sampled but not yet evaluated
  bool begun_ = false;
  bool done_ = false;
};

// DRY's sequence breakers of `p` as token sequences of this vocabulary (empty when DRY is off: it
// reads every token's text). Generation builds them; so does the server, per request.
DryBreakers dry_breakers_for(const tok::Tokenizer& tokenizer, const SamplerParams& p);

}  // namespace ox
