// Job: the hand-over between the batch loop and the HTTP thread waiting for a request's text.
#include "native/server/job.h"

namespace ox::server {

JobUpdate Job::take(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, wait, [&] { return done_ || !text_.empty() || !logprobs_.empty(); });
  JobUpdate u;
  u.text.swap(text_);
  u.logprobs.swap(logprobs_);
  u.done = done_;
  if (done_) {
    u.finish_reason = finish_reason_;
    u.error = error_;
    u.usage = usage_;
  }
  return u;
}

void Job::append(std::string_view text) {
  if (text.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    text_.append(text);
  }
  cv_.notify_all();
}

void Job::append_logprob(TokenLogprob entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    logprobs_.push_back(std::move(entry));
  }
  cv_.notify_all();
}

void Job::finish(std::string reason, const JobUsage& usage) { end(std::move(reason), std::string(), usage); }

void Job::fail(std::string message, const JobUsage& usage) { end(std::string(), std::move(message), usage); }

void Job::end(std::string reason, std::string error, const JobUsage& usage) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    finish_reason_ = std::move(reason);
    error_ = std::move(error);
    usage_ = usage;
  }
  cv_.notify_all();
}

bool Job::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

}  // namespace ox::server
