// The batch loop: admission into slots with prefix reuse, one forward_batch per step (every
// generating slot's next token, or one joining prompt's chunk), sampling, stop strings and
// streamed text.
#include "native/server/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/session/generation.h"
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
  Active(std::shared_ptr<Job> j, int c, const tok::Tokenizer& tokenizer)
      : job(std::move(j)),
        choice(c),
        sampler(job->sampling(c), job->params().dry_breakers),
        decoder(tokenizer, job->params().render_special),
        stop(job->params().stop) {
    if (TokenConstraint* constraint = job->constraint(c); constraint != nullptr) {
      sampler.set_constraint(constraint);
      constraint->reset();
    }
  }
  std::shared_ptr<Job> job;
  int choice;                  // which of the job's choices this slot generates
  Sampler sampler;
  tok::StreamDecoder decoder;  // ids -> whole UTF-8 characters
  tok::StopMatcher stop;       // stop strings across pieces
  size_t prompt_pos = 0;       // prompt tokens [0, prompt_pos) are in the cache or in this step's batch
  int32_t pending = -1;        // sampled, not yet evaluated
  std::vector<int> choice_slots;  // choice 0, until its prompt is evaluated: the slots of choices 1..n-1
  bool waiting = false;        // choices 1..n-1: until choice 0's prompt is evaluated and copied
  int64_t n_keep = 0;          // leading tokens a context shift keeps
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
                                                          options.cache_type_v, options.n_slots, options.swa_full));
  s->slots_.resize(static_cast<size_t>(options.n_slots));
  s->logits_.resize(static_cast<size_t>(options.n_slots) * static_cast<size_t>(model->hparams().n_vocab));
  s->batch_.reserve(static_cast<size_t>(s->options_.n_batch));
  metrics->n_slots = options.n_slots;
  return s;
}

Admission Scheduler::submit(std::shared_ptr<Job> job) {
  OX_CHECK(job->n_choices() <= options_.n_slots);  // it would wait for ever: the route refuses it
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

// Free slots for each of the job's choices: each in turn takes the free slot whose cache shares the
// longest prefix with the prompt (choice 0 first: it evaluates the prompt); ties go to the slot used
// least recently (its conversation is the least likely to come back). Empty when too few are free.
std::vector<int> Scheduler::pick_slots(const Job& job) const {
  std::vector<int> picked;
  std::vector<bool> taken(slots_.size(), false);
  for (int c = 0; c < job.n_choices(); ++c) {
    int best = -1;
    size_t best_common = 0;
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (slots_[s].active || taken[s]) continue;
      const size_t common = common_prefix(slots_[s].cached, job.prompt());
      if (best < 0 || common > best_common ||
          (common == best_common && slots_[s].last_used < slots_[static_cast<size_t>(best)].last_used)) {
        best = static_cast<int>(s);
        best_common = common;
      }
    }
    if (best < 0) return {};
    taken[static_cast<size_t>(best)] = true;
    picked.push_back(best);
  }
  return picked;
}

// Cached tokens of the slot that the prompt can keep. need_logits: at least the prompt's last token
// is evaluated again, for fresh logits. A recurrent state cannot be cut back: it is kept whole (when
// the prompt continues it) or not at all.
size_t Scheduler::reusable_prefix(const Slot& slot, const std::vector<int32_t>& prompt, bool need_logits) const {
  size_t common = common_prefix(slot.cached, prompt);
  if (model_->model().has_recurrent_state()) {
    const bool whole = common == slot.cached.size() && !(need_logits && common == prompt.size());
    return whole && need_logits ? common : 0;  // a copy into another sequence replaces its state whole
  }
  if (need_logits && common == prompt.size()) --common;
  return common;
}

void Scheduler::admit(const std::shared_ptr<Job>& job, const std::vector<int>& slots) {
  const std::vector<int32_t>& prompt = job->prompt();
  // Leading tokens a context shift keeps: llama-server's n_keep (after BOS), at most n_ctx - 4.
  const int64_t n_keep = std::clamp<int64_t>(resolve_n_keep(job->params().n_keep, prompt, model_->tokenizer().bos_id()),
                                             0, std::max(options_.n_ctx_slot - 4, 0));
  for (size_t c = 0; c < slots.size(); ++c) {
    const int s = slots[c];
    Slot& slot = slots_[static_cast<size_t>(s)];
    const bool evaluates = c == 0;  // the other choices get its cache rows and logits
    size_t common = reusable_prefix(slot, prompt, evaluates);
    // Sliding-window layers that moved past what the cut needs: the whole prompt again.
    if (common > 0 && !state_->kv.can_resume(s, static_cast<int64_t>(common))) common = 0;
    const Status removed = model_->model().seq_rm(*state_, s, static_cast<int64_t>(common), -1);
    OX_CHECK(removed.is_ok());  // a tail, or a recurrent sequence whole: cannot fail
    slot.cached.resize(common);
    slot.last_used = ++use_counter_;
    slot.active = std::make_unique<Active>(job, static_cast<int>(c), model_->tokenizer());
    Active& a = *slot.active;
    a.prompt_pos = evaluates ? common : prompt.size();
    a.waiting = !evaluates;
    a.n_keep = n_keep;
    a.usage.n_prompt = static_cast<int>(prompt.size());
    if (evaluates) {
      a.usage.n_cached = static_cast<int>(common);
      a.choice_slots.assign(slots.begin() + 1, slots.end());
      metrics_->prompt_tokens_cached.fetch_add(common);
    }
    metrics_->generations_total.fetch_add(1);
    metrics_->slots_busy.fetch_add(1);
  }
}

// Queued jobs into free slots, in order: a job of n choices waits until n slots are free, and the
// jobs behind it wait too (first come, first served).
void Scheduler::admit_waiting() {
  while (!queue_.empty()) {
    if (queue_.front()->cancelled()) {
      const std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      for (int c = 0; c < job->n_choices(); ++c) job->finish(c, "abort", JobUsage{});
      continue;
    }
    const std::vector<int> slots = pick_slots(*queue_.front());
    if (slots.empty()) break;
    admit(queue_.front(), slots);
    queue_.pop_front();
  }
  metrics_->queue_depth.store(static_cast<int64_t>(queue_.size()));
}

void Scheduler::finish_slot(int s, const char* reason, bool flush) {
  Active& a = *slots_[static_cast<size_t>(s)].active;
  if (flush) {
    // Held-back text (a partial stop string, an unfinished UTF-8 sequence) is released, as in
    // core/session/generation.cpp.
    tok::StopMatcher::Step last = a.stop.push(a.decoder.flush());
    std::string rest = std::move(last.text);
    if (!last.stopped) rest += a.stop.flush();
    a.job->append(a.choice, rest);
  }
  a.job->finish(a.choice, reason, a.usage);
  slots_[static_cast<size_t>(s)].active.reset();
  metrics_->slots_busy.fetch_sub(1);
}

// The request fails (its other choices end at the next step); the slot is freed.
void Scheduler::fail_slot(int s, const std::string& message) {
  Active& a = *slots_[static_cast<size_t>(s)].active;
  a.job->fail(message, a.usage);
  slots_[static_cast<size_t>(s)].active.reset();
  metrics_->slots_busy.fetch_sub(1);
}

void Scheduler::fail_all(const std::string& message) {
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].active) fail_slot(static_cast<int>(s), message);
  }
}

// Choice 0's prompt is in the cache and `logits` are its last token's: every other choice of the
// job gets those cache rows (from where its own cached prefix ends) and samples its first token
// from the same logits. From here each choice is a generation of its own.
void Scheduler::start_choices(int parent, std::span<const float> logits) {
  Slot& from = slots_[static_cast<size_t>(parent)];
  const std::vector<int> choice_slots = std::move(from.active->choice_slots);
  from.active->choice_slots.clear();
  for (const int s : choice_slots) {
    Slot& slot = slots_[static_cast<size_t>(s)];
    if (!slot.active || !slot.active->waiting) continue;  // freed by a failure of the job
    const int64_t p0 = static_cast<int64_t>(slot.cached.size());
    const int64_t p1 = static_cast<int64_t>(from.cached.size());
    if (p0 < p1) {
      if (const Status copied = state_->kv.seq_cp(parent, s, p0, p1); !copied.is_ok()) {
        fail_slot(s, "internal error: " + copied.message());
        continue;
      }
    }
    slot.cached = from.cached;
    slot.active->waiting = false;
    sample_slot(s, logits);
  }
}

// Context shift (llama-server's --context-shift): keeps the first n_keep tokens, drops half of the
// rest (or the request's n_discard) and moves the others down, re-rotating their keys. False when it
// cannot: shifting is off, the model's positions cannot move, or nothing is left to drop.
bool Scheduler::shift_slot(int s) {
  if (!options_.context_shift || !model_->model().can_shift()) return false;
  Slot& slot = slots_[static_cast<size_t>(s)];
  const Active& a = *slot.active;
  const int64_t n_past = static_cast<int64_t>(slot.cached.size());
  const int64_t n_left = n_past - a.n_keep;
  const int64_t asked = a.job->params().n_discard;
  const int64_t n_discard = std::clamp<int64_t>(asked > 0 ? asked : n_left / 2, 0, std::max<int64_t>(n_left - 1, 0));
  if (n_discard < 1) return false;
  if (const Status shifted = model_->model().shift(*state_, a.n_keep, n_discard, n_past, s); !shifted.is_ok()) {
    std::fprintf(stderr, "oxidize serve: context shift of slot %d failed: %s\n", s, shifted.message().c_str());
    return false;
  }
  slot.cached.erase(slot.cached.begin() + a.n_keep, slot.cached.begin() + a.n_keep + n_discard);
  metrics_->context_shifts_total.fetch_add(1);
  return true;
}

void Scheduler::sample_slot(int s, std::span<const float> logits) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  Active& a = *slot.active;
  const GenParams& params = a.job->params();
  Result<int32_t> sampled = a.sampler.sample(logits, slot.cached);
  // No token allowed (biases, a grammar): the request fails.
  if (!sampled.ok()) return fail_slot(s, sampled.status().message());
  const int32_t token = sampled.value();
  if (!params.ignore_eos && model_->tokenizer().is_eog(token)) return finish_slot(s, "stop", true);
  if (Status accepted = a.sampler.accept(token); !accepted.is_ok()) return fail_slot(s, accepted.message());
  ++a.usage.n_generated;
  metrics_->generated_tokens_total.fetch_add(1);
  if (params.top_logprobs >= 0) {
    a.job->append_logprob(a.choice, token_logprob(a.sampler.probs(), model_->tokenizer(), params.top_logprobs,
                                                  params.render_special));
  }
  Result<std::string> text = a.decoder.push(token);
  OX_CHECK(text.ok());  // the sampler only returns ids of the vocabulary
  tok::StopMatcher::Step released = a.stop.push(text.value());
  a.job->append(a.choice, released.text);
  if (released.stopped) return finish_slot(s, "stop", false);
  if (params.max_tokens >= 0 && a.usage.n_generated >= params.max_tokens) return finish_slot(s, "length", true);
  // Full when the next token would take the slot's last position (generation.cpp's rule, and
  // llama-server's): shift, or stop.
  if (slot.cached.size() + 1 >= static_cast<size_t>(options_.n_ctx_slot) && !shift_slot(s)) {
    return finish_slot(s, "length", true);
  }
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
  // Decode tokens and prompt chunks take separate steps, so that each is computed as it would be
  // alone and a request's greedy tokens do not depend on what else the server runs: a decode step
  // holds one token per generating slot (Model::forward_batch gives each its solo bits), a prompt
  // step one slot's next chunk of up to n_batch tokens, as a lone request's prompt is cut. While
  // both wait, prompt steps run back to back until they have evaluated n_batch tokens since the last
  // decode step (a generating slot waits no longer than for one llama-server step of -b prompt
  // tokens), and joining prompts take turns from a rotating slot.
  bool any_decode = false, any_prompt = false;
  for (const Slot& slot : slots_) {
    if (!slot.active) continue;
    any_decode |= slot.active->pending >= 0;
    any_prompt |= slot.active->prompt_pos < slot.active->job->prompt().size();
  }
  const bool prompt_step = any_prompt && (!any_decode || prompt_tokens_since_decode_ < options_.n_batch);
  int n_decode = 0;
  if (!prompt_step) {
    prompt_tokens_since_decode_ = 0;
    for (int s = 0; s < n_slots; ++s) {
      Slot& slot = slots_[static_cast<size_t>(s)];
      if (!slot.active || slot.active->pending < 0) continue;
      batch_.push_back(BatchToken{slot.active->pending, s, static_cast<int64_t>(slot.cached.size()), true});
      batch_logit_slot_.push_back(s);
      slot.active->pending = -1;
      ++n_decode;
    }
  }
  for (int i = 1; i <= n_slots && prompt_step; ++i) {
    const int s = (prefill_start_ + i) % n_slots;
    Slot& slot = slots_[static_cast<size_t>(s)];
    if (!slot.active) continue;
    Active& a = *slot.active;
    const std::vector<int32_t>& prompt = a.job->prompt();
    if (a.prompt_pos >= prompt.size()) continue;
    const size_t n = std::min(prompt.size() - a.prompt_pos, static_cast<size_t>(options_.n_batch));
    const int64_t pos0 = static_cast<int64_t>(slot.cached.size());
    for (size_t k = 0; k < n; ++k) {
      const bool last = a.prompt_pos + k + 1 == prompt.size();
      batch_.push_back(BatchToken{prompt[a.prompt_pos + k], s, pos0 + static_cast<int64_t>(k), last});
      if (last) batch_logit_slot_.push_back(s);
    }
    a.prompt_pos += n;
    prompt_tokens_since_decode_ += static_cast<int>(n);
    prefill_start_ = s;  // the next prompt step starts after this slot
    break;
  }
  if (batch_.empty()) return Status::ok();
  const double t0 = now_ms();
  OX_TRY(model_->model().forward_batch(*state_, batch_, logits_.data()));
  for (const BatchToken& t : batch_) slots_[static_cast<size_t>(t.seq)].cached.push_back(t.token);
  const size_t n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
  for (size_t r = 0; r < batch_logit_slot_.size(); ++r) {
    const int s = batch_logit_slot_[r];
    if (!slots_[static_cast<size_t>(s)].active) continue;  // cannot happen: only a job's failure frees other slots, at the next step
    const std::span<const float> row = std::span<const float>(logits_).subspan(r * n_vocab, n_vocab);
    if (!slots_[static_cast<size_t>(s)].active->choice_slots.empty()) start_choices(s, row);
    sample_slot(s, row);
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
      admit_waiting();
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
