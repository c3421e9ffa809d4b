// Job: the hand-over between the batch loop and the HTTP thread waiting for a request's choices.
#include "native/server/job.h"

#include <algorithm>

#include "core/base/status.h"

namespace ox::server {

Job::Job(std::vector<int32_t> prompt, GenParams params) : prompt_(std::move(prompt)), params_(std::move(params)) {
  OX_CHECK(params_.n_choices >= 1);
  OX_CHECK(params_.constraints.empty() || params_.constraints.size() == static_cast<size_t>(params_.n_choices));
  choices_.resize(static_cast<size_t>(params_.n_choices));
}

SamplerParams Job::sampling(int choice) const {
  SamplerParams p = params_.sampling;
  // Each choice its own stream of draws; a fixed seed gives every choice again (choice 0 is what
  // the same request with n = 1 gives). A random seed stays random: each sampler draws its own.
  if (p.seed != kRandomSeed) {
    p.seed += static_cast<uint64_t>(choice);
    if (p.seed == kRandomSeed) ++p.seed;  // kRandomSeed means "draw one": skip it
  }
  return p;
}

TokenConstraint* Job::constraint(int choice) const {
  return params_.constraints.empty() ? nullptr : params_.constraints[static_cast<size_t>(choice)].get();
}

JobUpdate Job::take(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, wait, [&] { return changed_ || done_locked(); });
  changed_ = false;
  JobUpdate u;
  u.choices.resize(choices_.size());
  for (size_t i = 0; i < choices_.size(); ++i) {
    u.choices[i].text.swap(choices_[i].text);
    u.choices[i].logprobs.swap(choices_[i].logprobs);
    u.choices[i].done = choices_[i].done;
    u.choices[i].finish_reason = choices_[i].finish_reason;
  }
  u.done = done_locked();
  if (u.done) {
    u.error = error_;
    u.usage = usage_;
  }
  return u;
}

void Job::append(int choice, std::string_view text) {
  if (text.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    choices_[static_cast<size_t>(choice)].text.append(text);
    changed_ = true;
  }
  cv_.notify_all();
}

void Job::append_logprob(int choice, TokenLogprob entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    choices_[static_cast<size_t>(choice)].logprobs.push_back(std::move(entry));
    changed_ = true;
  }
  cv_.notify_all();
}

void Job::finish(int choice, std::string reason, const JobUsage& usage) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Choice& c = choices_[static_cast<size_t>(choice)];
    if (c.done) return;
    c.done = true;
    c.finish_reason = std::move(reason);
    ++n_done_;
    changed_ = true;
    // The prompt was evaluated once, in choice 0's slot; every choice's tokens count.
    if (choice == 0) {
      usage_.n_prompt = usage.n_prompt;
      usage_.n_cached = usage.n_cached;
      usage_.prompt_ms = usage.prompt_ms;
    }
    usage_.n_generated += usage.n_generated;
    usage_.generate_ms = std::max(usage_.generate_ms, usage.generate_ms);
  }
  cv_.notify_all();
}

void Job::fail(std::string message, const JobUsage& usage) {
  cancel();  // the other choices end at the next step: nobody reads them
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_locked()) return;
    error_ = message.empty() ? "internal error" : std::move(message);
    usage_.n_prompt = usage.n_prompt;
    usage_.n_generated += usage.n_generated;
    changed_ = true;
  }
  cv_.notify_all();
}

bool Job::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_locked();
}

}  // namespace ox::server
