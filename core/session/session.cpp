// LoadedModel and Session: loading, eval with prefix reuse, and the generation loop.
#include "core/session/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/base/memory.h"
#include "kernels/kernels.h"

namespace ox {
namespace {

// Converts the weights, where the file's bytes may be rewritten, to the layouts the kernel table
// that sessions will use multiplies fastest (Session::create takes best_kernels() too).
void relayout_for(gguf::GgufFile& file, const kernels::KernelTable& kernels) {
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    const kernels::Relayout& r = kernels.relayout[i];
    if (r.fn != nullptr) file.relayout(static_cast<DType>(i), r.to, r.fn);
  }
}

}  // namespace

Result<std::shared_ptr<const LoadedModel>> LoadedModel::open(const std::string& path) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  // A mapped model larger than physical memory would page from disk on every token.
  const uint64_t model_bytes = file->file_bytes();
  const MemoryBudget budget = memory_budget();
  if (model_bytes > budget.total) {
    return error(ErrorCode::kTooLarge, strfmt("%s: the model is %.2f GiB, more than this machine's %.2f GiB of memory",
                                              path.c_str(), model_bytes / 1073741824.0, budget.total / 1073741824.0));
  }
  relayout_for(*file, kernels::best_kernels());
  return build(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

Result<std::shared_ptr<const LoadedModel>> LoadedModel::from_bytes(std::span<const uint8_t> bytes, std::string name,
                                                                  std::shared_ptr<const void> owner, bool writable) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file,
                      gguf::GgufFile::parse(bytes, std::move(name), std::move(owner), writable));
  relayout_for(*file, kernels::best_kernels());
  return build(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

Result<std::shared_ptr<const LoadedModel>> LoadedModel::build(std::shared_ptr<const gguf::GgufFile> file) {
  auto loaded = std::shared_ptr<LoadedModel>(new LoadedModel());
  loaded->file_ = file;
  OX_ASSIGN_OR_RETURN(loaded->model_, Model::load(file));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<tok::Tokenizer> tokenizer, tok::Tokenizer::from_gguf(*file));
  loaded->tokenizer_ = std::move(tokenizer);
  if (loaded->tokenizer_->n_vocab() != loaded->model_->hparams().n_vocab) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: tokenizer has %d tokens but the model's vocabulary has %d", file->name().c_str(),
                        loaded->tokenizer_->n_vocab(), loaded->model_->hparams().n_vocab));
  }
  loaded->chat_template_ = model_chat_template(*file, *loaded->tokenizer_);
  return std::shared_ptr<const LoadedModel>(std::move(loaded));
}

Result<std::shared_ptr<const LoadedModel>> LoadedModel::with_chat_template(std::string_view name_or_source) const {
  OX_ASSIGN_OR_RETURN(ChatTemplateInfo info, override_chat_template(name_or_source));
  auto loaded = std::shared_ptr<LoadedModel>(new LoadedModel());
  loaded->file_ = file_;
  loaded->model_ = model_;
  loaded->tokenizer_ = tokenizer_;
  loaded->chat_template_ = std::move(info);
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
  if (!model->model().spec().causal_attention) {  // bert & co: no lm head, every token sees the whole input
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: '%s' is an encoder (non-causal attention, no lm head): it computes embeddings "
                        "(oxidize embed / rerank), not text", model->file().name().c_str(), model->hparams().arch.c_str()));
  }
  const int n_ctx_train = model->hparams().n_ctx_train;
  int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(n_ctx_train, SessionOptions::kDefaultMaxContext);
  auto session = std::unique_ptr<Session>(new Session(model, options.n_threads));
  session->n_ctx_ = n_ctx;
  session->n_batch_ = std::min(options.n_batch, n_ctx);
  OX_ASSIGN_OR_RETURN(session->state_,
                      model->model().new_state(n_ctx, session->n_batch_, &kernels::best_kernels(), &session->pool_,
                                               options.cache_type_k, options.cache_type_v, 1, options.swa_full));
  session->logits_.resize(static_cast<size_t>(model->hparams().n_vocab));
  return session;
}

Result<std::vector<int32_t>> Session::tokenize(std::string_view text, bool add_special, bool parse_special) const {
  return model_->tokenizer().encode(text, add_special, parse_special);
}

Status Session::eval(std::span<const int32_t> tokens) { return eval(tokens, nullptr); }

Status Session::eval(std::span<const int32_t> tokens, float* all_logits) {
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
  if (!tokens_.empty() && !can_resume(n_past())) {
    // The sliding-window layers lack positions the next token sees (a cut back, or a context shift
    // that kept fewer than a window): the held tokens again from position 0.
    const std::vector<int32_t> held = std::move(tokens_);
    tokens_.clear();
    OX_TRY(eval(held, nullptr));
  }
  for (size_t done = 0; done < tokens.size();) {
    const size_t n = std::min(tokens.size() - done, static_cast<size_t>(n_batch_));
    if (all_logits != nullptr) {
      float* rows = all_logits + done * static_cast<size_t>(n_vocab);
      model_->model().forward(*state_, tokens.subspan(done, n), static_cast<int64_t>(tokens_.size()), true, rows);
      std::memcpy(logits_.data(), rows + (n - 1) * static_cast<size_t>(n_vocab), sizeof(float) * logits_.size());
    } else {
      model_->model().forward(*state_, tokens.subspan(done, n), static_cast<int64_t>(tokens_.size()), false,
                              logits_.data());
    }
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
  if (n_keep > 0 && n_keep < n_past() && model_->model().has_recurrent_state()) {
    return error(ErrorCode::kUnsupported,
                 strfmt("cannot keep %d of %d positions: this %s model's recurrent state covers all of them, so it "
                        "can only be kept whole or cleared (keep 0)",
                        n_keep, n_past(), model_->hparams().arch.c_str()));
  }
  if (n_keep < n_past()) {
    tokens_.resize(static_cast<size_t>(n_keep));
    logits_valid_ = false;  // the logits belonged to a position that is gone
  }
  return Status::ok();
}

Status Session::shift(int n_keep, int n_discard) {
  OX_TRY(model_->model().shift(*state_, n_keep, n_discard, n_past()));
  tokens_.erase(tokens_.begin() + n_keep, tokens_.begin() + n_keep + n_discard);
  return Status::ok();
}

Result<GenerateStats> Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                        FunctionRef<bool(const GenerateEvent&)> on_event) {
  Generation generation(*this, std::vector<int32_t>(prompt.begin(), prompt.end()), options, 0);
  OX_TRY(generation.begin());
  std::vector<StepEvent> events;
  bool keep_going = true;
  while (!generation.done()) {
    const bool aborted = !keep_going || (options.abort != nullptr && options.abort->load(std::memory_order_relaxed));
    if (aborted) {
      generation.abort(&events);
    } else {
      OX_TRY(generation.step(/*max_events=*/1, /*budget_ms=*/1e300, &events));
    }
    for (const StepEvent& e : events) {
      const TokenProbs* probs = e.probs.token >= 0 ? &e.probs : nullptr;
      if (!on_event(GenerateEvent{e.token, e.text, probs})) keep_going = false;
    }
    events.clear();
  }
  return generation.stats();
}

}  // namespace ox
