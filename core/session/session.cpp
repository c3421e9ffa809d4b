// LoadedModel and Session: loading, eval with prefix reuse, and the generation loop.
#include "core/session/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/session/text_stream.h"
#include "kernels/kernels.h"

namespace ox {
namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::shared_ptr<const LoadedModel>> LoadedModel::open(const std::string& path) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  return build(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

Result<std::shared_ptr<const LoadedModel>> LoadedModel::from_bytes(std::span<const uint8_t> bytes, std::string name,
                                                                  std::shared_ptr<const void> owner) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file,
                      gguf::GgufFile::parse(bytes, std::move(name), std::move(owner)));
  return build(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

Result<std::shared_ptr<const LoadedModel>> LoadedModel::build(std::shared_ptr<const gguf::GgufFile> file) {
  auto loaded = std::shared_ptr<LoadedModel>(new LoadedModel());
  loaded->file_ = file;
  OX_ASSIGN_OR_RETURN(loaded->model_, Model::load(file));
  OX_ASSIGN_OR_RETURN(loaded->tokenizer_, tok::Tokenizer::from_gguf(*file));
  if (loaded->tokenizer_->n_vocab() != loaded->model_->hparams().n_vocab) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: tokenizer has %d tokens but the model's vocabulary has %d", file->name().c_str(),
                        loaded->tokenizer_->n_vocab(), loaded->model_->hparams().n_vocab));
  }
  return std::shared_ptr<const LoadedModel>(std::move(loaded));
}

Session::Session(std::shared_ptr<const LoadedModel> model, int n_threads)
    : model_(std::move(model)), pool_(n_threads) {}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const LoadedModel> model,
                                                 const SessionOptions& options) {
  if (options.n_threads < 1 || options.n_threads > 256) {
    return error(ErrorCode::kInvalidArgument, strfmt("thread count %d is out of range (1..256)", options.n_threads));
  }
  if (options.n_ctx < 0 || options.n_batch < 1) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("context size %d / batch size %d: context must be >= 0 and batch >= 1", options.n_ctx,
                        options.n_batch));
  }
  const int n_ctx_train = model->hparams().n_ctx_train;
  int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(n_ctx_train, SessionOptions::kDefaultMaxContext);
  auto session = std::unique_ptr<Session>(new Session(model, options.n_threads));
  session->n_ctx_ = n_ctx;
  session->n_batch_ = std::min(options.n_batch, n_ctx);
  OX_ASSIGN_OR_RETURN(session->state_, model->model().new_state(n_ctx, session->n_batch_, &kernels::best_kernels(),
                                                                &session->pool_));
  session->logits_.resize(static_cast<size_t>(model->hparams().n_vocab));
  return session;
}

Result<std::vector<int32_t>> Session::tokenize(std::string_view text, bool add_special, bool parse_special) const {
  return model_->tokenizer().encode(text, add_special, parse_special);
}

Status Session::eval(std::span<const int32_t> tokens) {
  const int n_vocab = model_->hparams().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("token %d at index %zu is out of range (vocabulary has %d tokens)", tokens[i], i, n_vocab));
    }
  }
  if (tokens_.size() + tokens.size() > static_cast<size_t>(n_ctx_)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("%zu tokens do not fit in the context: %zu of %d positions are used; raise the context "
                        "size (-c) or shorten the prompt",
                        tokens.size(), tokens_.size(), n_ctx_));
  }
  for (size_t done = 0; done < tokens.size();) {
    const size_t n = std::min(tokens.size() - done, static_cast<size_t>(n_batch_));
    model_->model().forward(*state_, tokens.subspan(done, n), static_cast<int64_t>(tokens_.size()), false,
                            logits_.data());
    tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + n);
    done += n;
    logits_valid_ = true;
  }
  return Status::ok();
}

std::span<const float> Session::logits() const {
  if (!logits_valid_) return {};
  return std::span<const float>(logits_);
}

Status Session::truncate(int n_keep) {
  if (n_keep < 0 || n_keep > n_past()) {
    return error(ErrorCode::kOutOfRange, strfmt("cannot keep %d positions: the context holds %d", n_keep, n_past()));
  }
  if (n_keep < n_past()) {
    tokens_.resize(static_cast<size_t>(n_keep));
    logits_valid_ = false;  // the logits belonged to a position that is gone
  }
  return Status::ok();
}

Result<GenerateStats> Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                        FunctionRef<bool(const GenerateEvent&)> on_event) {
  GenerateStats stats;
  if (prompt.empty() && tokens_.empty()) {
    return error(ErrorCode::kInvalidArgument, "empty prompt and empty context: nothing to continue from");
  }
  // Reuse the cached prefix; at least one token must be evaluated to get fresh logits.
  size_t common = 0;
  while (common < prompt.size() && common < tokens_.size() && tokens_[common] == prompt[common]) ++common;
  if (!prompt.empty()) {
    if (common == prompt.size()) --common;
    OX_TRY(truncate(static_cast<int>(common)));
  } else if (!logits_valid_) {
    // Continue from the context as it is: re-evaluate its last token for logits.
    common = tokens_.size() - 1;
    std::vector<int32_t> last(1, tokens_.back());
    OX_TRY(truncate(static_cast<int>(common)));
    OX_TRY(eval(last));
  }
  stats.n_prompt_cached = static_cast<int>(common);
  const double t0 = now_ms();
  if (common < prompt.size()) OX_TRY(eval(prompt.subspan(common)));
  stats.n_prompt = static_cast<int>(prompt.size() - common);
  stats.prompt_ms = now_ms() - t0;

  const tok::Tokenizer& tokenizer = model_->tokenizer();
  Sampler sampler(options.sampling);
  TextStream stream(options.stop);
  stats.finish_reason = "length";
  const double t1 = now_ms();
  int32_t pending = -1;  // sampled but not yet evaluated
  while (options.max_tokens < 0 || stats.n_generated < options.max_tokens) {
    if (options.abort != nullptr && options.abort->load(std::memory_order_relaxed)) {
      stats.finish_reason = "abort";
      break;
    }
    if (pending >= 0) {
      if (n_past() >= n_ctx_) break;  // context full: finish with "length"
      const int32_t one[1] = {pending};
      OX_TRY(eval(one));
    }
    const int32_t token = sampler.sample(logits(), tokens_);
    pending = token;
    if (!options.ignore_eos && tokenizer.is_eog(token)) {
      stats.finish_reason = "stop";
      break;
    }
    stats.tokens.push_back(token);
    ++stats.n_generated;
    OX_ASSIGN_OR_RETURN(std::string piece, tokenizer.token_to_piece(token, options.render_special));
    const bool stopped = stream.push(piece);
    std::string_view released = stream.take();
    stats.text += released;
    const bool go_on = on_event(GenerateEvent{token, released});
    if (stopped) {
      stats.finish_reason = "stop";
      break;
    }
    if (!go_on) {
      stats.finish_reason = "abort";
      break;
    }
  }
  if (stats.finish_reason != "stop") {
    // Flush held-back text (an incomplete stop-string prefix or a truncated UTF-8 sequence).
    stream.finish();
    std::string_view rest = stream.take();
    if (!rest.empty()) {
      stats.text += rest;
      on_event(GenerateEvent{-1, rest});
    }
  }
  // The last sampled token was never evaluated: the cache ends at the token before it, which
  // keeps tokens_ equal to what the KV cache holds.
  stats.generate_ms = now_ms() - t1;
  return stats;
}

}  // namespace ox
