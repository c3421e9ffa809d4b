// Resumable generation over Session's low-level API (eval / logits / truncate): prefix reuse,
// batched prompt processing, sampling, end-of-generation and stop strings, streamed text.
#include "core/session/generation.h"

#include "core/sampler/registry.h"
#include "core/session/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace ox {
namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// The parameters the sampler runs with: --ignore-eos bans every end-of-generation token, as
// llama.cpp's common_params_sampling::logit_bias_eog.
SamplerParams sampling_for(const Session& session, const GenerateOptions& options) {
  SamplerParams p = options.sampling;
  if (options.ignore_eos) {
    const tok::Tokenizer& tokenizer = session.model().tokenizer();
    for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
      if (tokenizer.is_eog(id)) p.logit_bias.push_back({id, -INFINITY});
    }
  }
  return p;
}

}  // namespace

DryBreakers dry_breakers_for(const tok::Tokenizer& tokenizer, const SamplerParams& p) {
  const bool dry_on = p.dry_multiplier != 0.0f && p.dry_base >= 1.0f && p.dry_penalty_last_n != 0;
  if (!dry_on || p.dry_sequence_breakers.empty()) return {};
  auto text = [&](int32_t id) -> std::string {
    const int32_t one[1] = {id};
    Result<std::string> r = tokenizer.decode(one, /*render_special=*/true);
    return r.ok() ? *r : std::string();
  };
  auto tokenize = [&](const std::string& s) -> std::vector<int32_t> {
    Result<std::vector<int32_t>> r = tokenizer.encode(s, /*add_special=*/false, /*parse_special=*/false);
    return r.ok() ? *r : std::vector<int32_t>();
  };
  return build_dry_breakers(p.dry_sequence_breakers, tokenizer.n_vocab(), text, tokenize);
}

int resolve_n_keep(int keep, std::span<const int32_t> prompt, int32_t bos_id) {
  const int n = static_cast<int>(prompt.size());
  if (keep < 0 || keep > n) return n;
  const bool has_bos = n > 0 && bos_id >= 0 && prompt[0] == bos_id;
  return std::min(n, keep + (has_bos ? 1 : 0));
}

Generation::Generation(Session& session, std::vector<int32_t> prompt, GenerateOptions options, int n_batch)
    : session_(session),
      prompt_(std::move(prompt)),
      options_(std::move(options)),
      n_batch_(n_batch > 0 ? n_batch : session.n_batch()),
      sampler_(sampling_for(session, options_), dry_breakers_for(session.model().tokenizer(), options_.sampling)),
      decoder_(session.model().tokenizer(), options_.render_special),
      stop_(options_.stop) {}

Status Generation::begin() {
  OX_CHECK(!begun_);
  begun_ = true;
  stats_.finish_reason = "length";
  if (prompt_.empty()) {
    return error(ErrorCode::kInvalidArgument, "the prompt is empty and the vocabulary adds no BOS token");
  }
  const int n_vocab = session_.model().hparams().n_vocab;
  OX_TRY(validate(options_.sampling));
  for (const LogitBias& b : options_.sampling.logit_bias) {
    if (b.token >= n_vocab) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--logit-bias: token %d is out of range (vocabulary has %d tokens)", b.token, n_vocab));
    }
  }
  if (options_.constraint != nullptr) {
    sampler_.set_constraint(options_.constraint.get());
    options_.constraint->reset();
  }
  for (size_t i = 0; i < prompt_.size(); ++i) {
    if (prompt_[i] < 0 || prompt_[i] >= n_vocab) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("prompt token %d at index %zu is out of range (vocabulary has %d tokens)", prompt_[i], i,
                          n_vocab));
    }
  }
  const int n_ctx = session_.n_ctx();
  if (options_.n_keep < 0 || options_.n_keep >= n_ctx) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("n_keep %d is outside the context (0..%d)", options_.n_keep, n_ctx - 1));
  }
  if (prompt_.size() >= static_cast<size_t>(n_ctx)) {
    if (!options_.context_shift) {
      return error(ErrorCode::kOutOfRange,
                   strfmt("the prompt has %zu tokens but the context holds %d (and one more is needed to generate); "
                          "raise the context size (-c / n_ctx), shorten the prompt, or allow a context shift",
                          prompt_.size(), n_ctx));
    }
    // As llama-server: the first n_keep tokens, then whole blocks of half the rest dropped from the
    // front until what is left fits with room for one generated token.
    const size_t keep = static_cast<size_t>(options_.n_keep);
    const size_t block = static_cast<size_t>(n_ctx - options_.n_keep) / 2;
    if (block == 0) return error(ErrorCode::kOutOfRange, "n_keep leaves no room to cut the prompt into the context");
    const size_t erased = (prompt_.size() - keep - block) / block * block;
    prompt_.erase(prompt_.begin() + static_cast<std::ptrdiff_t>(keep),
                  prompt_.begin() + static_cast<std::ptrdiff_t>(keep + erased));
    stats_.n_prompt_dropped = static_cast<int>(erased);
  }
  // Reuse the cached prefix; at least one prompt token is evaluated so the logits are fresh.
  const std::vector<int32_t>& cached = session_.tokens();
  size_t common = 0;
  while (common < prompt_.size() && common < cached.size() && cached[common] == prompt_[common]) ++common;
  if (common == prompt_.size()) --common;
  // A recurrent state cannot be cut back to the common prefix: it is reused whole or not at all.
  if (session_.model().model().has_recurrent_state() && common < cached.size()) common = 0;
  // Sliding-window layers that moved past the window the cut needs: the whole prompt again.
  if (common > 0 && !session_.can_resume(static_cast<int>(common))) common = 0;
  OX_TRY(session_.truncate(static_cast<int>(common)));
  prompt_pos_ = common;
  stats_.n_prompt_cached = static_cast<int>(common);
  stats_.n_prompt = static_cast<int>(prompt_.size() - common);
  return Status::ok();
}

Status Generation::step(int max_events, double budget_ms, std::vector<StepEvent>* events) {
  OX_CHECK(begun_);
  const double start = now_ms();
  int produced = 0;
  while (!done_ && produced < max_events) {
    if (prompt_pos_ < prompt_.size()) {  // one batch of prompt processing per round
      const size_t n = std::min(prompt_.size() - prompt_pos_, static_cast<size_t>(n_batch_));
      const double t0 = now_ms();
      OX_TRY(session_.eval(std::span<const int32_t>(prompt_).subspan(prompt_pos_, n)));
      stats_.prompt_ms += now_ms() - t0;
      prompt_pos_ += n;
    } else {
      if (options_.max_tokens >= 0 && stats_.n_generated >= options_.max_tokens) {
        finish("length", events, /*flush=*/true);
        break;
      }
      const double t0 = now_ms();
      if (pending_ >= 0) {
        // Full when the next token would take the last position (llama.cpp's test, so a shift
        // happens at the same token as in llama-completion --context-shift).
        if (session_.n_past() + 1 >= session_.n_ctx()) {
          const int n_discard = (session_.n_past() - options_.n_keep) / 2;
          if (!options_.context_shift || n_discard < 1 || !session_.model().model().can_shift()) {
            finish("length", events, /*flush=*/true);
            break;
          }
          OX_TRY(session_.shift(options_.n_keep, n_discard));
          ++stats_.n_context_shifts;
          stats_.n_shifted_out += n_discard;
        }
        const int32_t one[1] = {pending_};
        OX_TRY(session_.eval(one));
      }
      OX_ASSIGN_OR_RETURN(const int32_t token, sampler_.sample(session_.logits(), session_.tokens()));
      pending_ = token;
      const tok::Tokenizer& tokenizer = session_.model().tokenizer();
      if (!tokenizer.is_eog(token)) OX_TRY(sampler_.accept(token));
      if (!options_.ignore_eos && tokenizer.is_eog(token)) {
        stats_.generate_ms += now_ms() - t0;
        finish("stop", events, /*flush=*/true);
        break;
      }
      stats_.tokens.push_back(token);
      ++stats_.n_generated;
      OX_ASSIGN_OR_RETURN(std::string text, decoder_.push(token));
      tok::StopMatcher::Step released = stop_.push(text);
      stats_.text += released.text;
      events->push_back(StepEvent{token, std::move(released.text), sampler_.probs()});
      stats_.generate_ms += now_ms() - t0;
      ++produced;
      if (released.stopped) {
        finish("stop", events, /*flush=*/false);
        break;
      }
    }
    if (now_ms() - start >= budget_ms) break;
  }
  return Status::ok();
}

void Generation::abort(std::vector<StepEvent>* events) {
  if (!done_) finish("abort", events, /*flush=*/true);
}

void Generation::finish(const char* reason, std::vector<StepEvent>* events, bool flush) {
  done_ = true;
  stats_.finish_reason = reason;
  if (flush) {
    // Release held-back text (a partial stop string or a truncated UTF-8 sequence). Unlike a stop
    // string, an end-of-generation token leaves that text valid, so it is released too.
    tok::StopMatcher::Step last = stop_.push(decoder_.flush());
    std::string rest = std::move(last.text);
    if (!last.stopped) rest += stop_.flush();
    if (!rest.empty()) {
      stats_.text += rest;
      events->push_back(StepEvent{-1, std::string(rest), TokenProbs()});
    }
  }
}

}  // namespace ox
