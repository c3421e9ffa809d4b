// The batch loop: admission into slots with prefix reuse, one forward_batch per step over every
// slot's decode token and chunks of joining prompts, sampling, stop strings and streamed text.
#include "native/server/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "kernels/kernels.h"
#include "native/server/logprobs.h"

namespace ox::server {
namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

struct Scheduler::Active {
  Active(std::shared_ptr<Job> j, const tok::Tokenizer& tokenizer)
      : job(std::move(j)), sampler(job->params().sampling, job->params().dry_breakers), decoder(tokenizer, job->params().render_special), stop(job->params().stop) {
    if (job->params().constraint != nullptr) {
      sampler.set_constraint(job->params().constraint.get());
      job->params().constraint->reset();
    }
  }
  std::shared_ptr<Job> job;
  Sampler sampler;
  tok::StreamDecoder decoder;  // ids -> whole UTF-8 characters
  tok::StopMatcher stop;       // stop strings across pieces
  size_t prompt_pos = 0;       // prompt tokens [0, prompt_pos) are in the cache or in this step's batch
  int32_t pending = -1;        // sampled, not yet evaluated
  JobUsage usage;
};

Scheduler::Scheduler(std::shared_ptr<const LoadedModel> model, const SchedulerOptions& options, Metrics* metrics)
    : model_(std::move(model)), options_(options), metrics_(metrics), pool_(options.n_threads) {}

Scheduler::~Scheduler() = default;

Result<std::unique_ptr<Scheduler>> Scheduler::create(std::shared_ptr<const LoadedModel> model,
                                                     const SchedulerOptions& options, Metrics* metrics) {
  if (options.n_slots < 1 || options.n_ctx_slot < 2 || options.n_batch < 1) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%d slots of %d positions, batches of %d tokens: need at least 1 slot of 2 positions",
                        options.n_slots, options.n_ctx_slot, options.n_batch));
  }
  auto s = std::unique_ptr<Scheduler>(new Scheduler(model, options, metrics));
  // Every generating slot adds one token per step, so a batch holds at least one per slot.
  s->options_.n_batch = std::max(options.n_batch, options.n_slots);
  OX_ASSIGN_OR_RETURN(s->state_, model->model().new_state(options.n_ctx_slot, s->options_.n_batch,
                                                          &kernels::best_kernels(), &s->pool_, options.cache_type_k,
                                                          options.cache_type_v, options.n_slots));
  s->slots_.resize(static_cast<size_t>(options.n_slots));
  s->logits_.resize(static_cast<size_t>(options.n_slots) * static_cast<size_t>(model->hparams().n_vocab));
  s->batch_.reserve(static_cast<size_t>(s->options_.n_batch));
  metrics->n_slots = options.n_slots;
  return s;
}

Admission Scheduler::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Admission::kShuttingDown;
    // Room for max_queue waiting requests beyond the slots that are free now (so --queue 0 still
    // serves n_slots requests at a time).
    const int64_t n_free = options_.n_slots - metrics_->slots_busy.load();
    if (static_cast<int64_t>(queue_.size()) >= options_.max_queue + std::max<int64_t>(n_free, 0)) {
      return Admission::kQueueFull;
    }
    queue_.push_back(std::move(job));
    metrics_->queue_depth.store(static_cast<int64_t>(queue_.size()));
  }
  cv_.notify_all();
  return Admission::kQueued;
}

void Scheduler::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

// The free slot whose cache shares the longest prefix with the job's prompt; ties go to the slot
// used least recently (its conversation is the least likely to come back).
int Scheduler::pick_slot(const Job& job) const {
  int best = -1;
  size_t best_common = 0;
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].active) continue;
    const size_t common = common_prefix(slots_[s].cached, job.prompt());
    if (best < 0 || common > best_common ||
        (common == best_common && slots_[s].last_used < slots_[static_cast<size_t>(best)].last_used)) {
      best = static_cast<int>(s);
      best_common = common;
    }
  }
  return best;
}

void Scheduler::admit(std::shared_ptr<Job> job, int s) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  const std::vector<int32_t>& prompt = job->prompt();
  // Keep the common prefix; at least the prompt's last token is evaluated again for fresh logits.
  size_t common = common_prefix(slot.cached, prompt);
  if (common == prompt.size()) --common;
  const Status removed = model_->model().seq_rm(*state_, s, static_cast<int64_t>(common), -1);
  OX_CHECK(removed.is_ok());  // a tail removal cannot fail
  slot.cached.resize(common);
  slot.last_used = ++use_counter_;
  slot.active = std::make_unique<Active>(std::move(job), model_->tokenizer());
  slot.active->prompt_pos = common;
  slot.active->usage.n_prompt = static_cast<int>(prompt.size());
  slot.active->usage.n_cached = static_cast<int>(common);
  metrics_->generations_total.fetch_add(1);
  metrics_->prompt_tokens_cached.fetch_add(common);
  metrics_->slots_busy.fetch_add(1);
}

void Scheduler::finish_slot(int s, const char* reason, bool flush) {
  Active& a = *slots_[static_cast<size_t>(s)].active;
  if (flush) {
    // Held-back text (a partial stop string, an unfinished UTF-8 sequence) is released, as in
    // core/session/generation.cpp.
    tok::StopMatcher::Step last = a.stop.push(a.decoder.flush());
    std::string rest = std::move(last.text);
    if (!last.stopped) rest += a.stop.flush();
    a.job->append(rest);
  }
  a.job->finish(reason, a.usage);
  slots_[static_cast<size_t>(s)].active.reset();
  metrics_->slots_busy.fetch_sub(1);
}

void Scheduler::fail_all(const std::string& message) {
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (!slots_[s].active) continue;
    slots_[s].active->job->fail(message, slots_[s].active->usage);
    slots_[s].active.reset();
    metrics_->slots_busy.fetch_sub(1);
  }
}

void Scheduler::sample_slot(int s, std::span<const float> logits) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  Active& a = *slot.active;
  const GenParams& params = a.job->params();
  Result<int32_t> sampled = a.sampler.sample(logits, slot.cached);
  if (!sampled.ok()) {  // no token allowed (biases, a grammar): the request fails, the slot is freed
    a.job->fail(sampled.status().message(), a.usage);
    slot.active.reset();
    metrics_->slots_busy.fetch_sub(1);
    return;
  }
  const int32_t token = sampled.value();
  if (!params.ignore_eos && model_->tokenizer().is_eog(token)) return finish_slot(s, "stop", true);
  if (Status accepted = a.sampler.accept(token); !accepted.is_ok()) {  // the grammar advances
    a.job->fail(accepted.message(), a.usage);
    slot.active.reset();
    metrics_->slots_busy.fetch_sub(1);
    return;
  }
  ++a.usage.n_generated;
  metrics_->generated_tokens_total.fetch_add(1);
  if (params.top_logprobs >= 0) {
    a.job->append_logprob(token_logprob(a.sampler.probs(), model_->tokenizer(), params.top_logprobs, params.render_special));
  }
  Result<std::string> text = a.decoder.push(token);
  OX_CHECK(text.ok());  // the sampler only returns ids of the vocabulary
  tok::StopMatcher::Step released = a.stop.push(text.value());
  a.job->append(released.text);
  if (released.stopped) return finish_slot(s, "stop", false);
  if (params.max_tokens >= 0 && a.usage.n_generated >= params.max_tokens) return finish_slot(s, "length", true);
  // Full when the next token would take the slot's last position (generation.cpp's rule).
  if (slot.cached.size() + 1 >= static_cast<size_t>(options_.n_ctx_slot)) return finish_slot(s, "length", true);
  a.pending = token;
}

Status Scheduler::step() {
  batch_.clear();
  batch_logit_slot_.clear();
  const int n_slots = options_.n_slots;
  for (int s = 0; s < n_slots; ++s) {  // a client that went away frees its slot now
    if (slots_[static_cast<size_t>(s)].active && slots_[static_cast<size_t>(s)].active->job->cancelled()) {
      finish_slot(s, "abort", false);
    }
  }
  // Decode tokens first (one per generating slot), then prompt chunks in the room left, starting
  // from a rotating slot so that several joining prompts share the prefill budget over steps.
  int n_decode = 0;
  for (int s = 0; s < n_slots; ++s) {
    Slot& slot = slots_[static_cast<size_t>(s)];
    if (!slot.active || slot.active->pending < 0) continue;
    batch_.push_back(BatchToken{slot.active->pending, s, static_cast<int64_t>(slot.cached.size()), true});
    batch_logit_slot_.push_back(s);
    slot.active->pending = -1;
    ++n_decode;
  }
  size_t budget = static_cast<size_t>(options_.n_batch) - batch_.size();
  prefill_start_ = (prefill_start_ + 1) % n_slots;
  for (int i = 0; i < n_slots && budget > 0; ++i) {
    const int s = (prefill_start_ + i) % n_slots;
    Slot& slot = slots_[static_cast<size_t>(s)];
    if (!slot.active) continue;
    Active& a = *slot.active;
    const std::vector<int32_t>& prompt = a.job->prompt();
    if (a.prompt_pos >= prompt.size()) continue;
    const size_t n = std::min(prompt.size() - a.prompt_pos, budget);
    const int64_t pos0 = static_cast<int64_t>(slot.cached.size() + 0);
    for (size_t k = 0; k < n; ++k) {
      const bool last = a.prompt_pos + k + 1 == prompt.size();
      batch_.push_back(BatchToken{prompt[a.prompt_pos + k], s, pos0 + static_cast<int64_t>(k), last});
      if (last) batch_logit_slot_.push_back(s);
    }
    a.prompt_pos += n;
    budget -= n;
  }
  if (batch_.empty()) return Status::ok();
  const double t0 = now_ms();
  OX_TRY(model_->model().forward_batch(*state_, batch_, logits_.data()));
  for (const BatchToken& t : batch_) slots_[static_cast<size_t>(t.seq)].cached.push_back(t.token);
  const size_t n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
  for (size_t r = 0; r < batch_logit_slot_.size(); ++r) {
    sample_slot(batch_logit_slot_[r], std::span<const float>(logits_).subspan(r * n_vocab, n_vocab));
  }
  const double ms = now_ms() - t0;
  const size_t n_prefill = batch_.size() - static_cast<size_t>(n_decode);
  const double decode_share = static_cast<double>(n_decode) / static_cast<double>(batch_.size());
  metrics_->batch_steps_total.fetch_add(1);
  metrics_->batch_tokens_total.fetch_add(batch_.size());
  metrics_->prompt_tokens_total.fetch_add(n_prefill);
  metrics_->prompt_us_total.fetch_add(static_cast<uint64_t>(ms * 1000.0 * (1.0 - decode_share)));
  metrics_->generate_us_total.fetch_add(static_cast<uint64_t>(ms * 1000.0 * decode_share));
  return Status::ok();
}

void Scheduler::run() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto any_active = [&] {
        return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.active != nullptr; });
      };
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || any_active(); });
      if (stopping_) break;
      while (!queue_.empty()) {
        const int s = pick_slot(*queue_.front());
        if (s < 0) break;
        std::shared_ptr<Job> job = std::move(queue_.front());
        queue_.pop_front();
        if (job->cancelled()) {
          job->finish("abort", JobUsage{});
          continue;
        }
        admit(std::move(job), s);
      }
      metrics_->queue_depth.store(static_cast<int64_t>(queue_.size()));
    }
    const Status status = step();
    if (!status.is_ok()) {  // a bug of ours: the jobs of this step end with it, the server goes on
      std::fprintf(stderr, "oxidize serve: error: batch step failed: %s\n", status.message().c_str());
      fail_all("internal error: " + status.message());
      for (size_t s = 0; s < slots_.size(); ++s) {  // their cache rows are unknown now
        (void)model_->model().seq_rm(*state_, static_cast<int>(s), 0, -1);
        slots_[s].cached.clear();
      }
    }
  }
  fail_all("the server is shutting down");
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::shared_ptr<Job>& job : queue_) job->fail("the server is shutting down", JobUsage{});
  queue_.clear();
  metrics_->queue_depth.store(0);
}

}  // namespace ox::server
